// Behaviour the Content-Security-Policy keeps out of inline attributes.
// A select marked data-autosubmit sends its form when its value changes;
// the form keeps a button for when scripts do not run.
document.addEventListener("change", (event) => {
  const field = event.target.closest("[data-autosubmit]");
  if (field && field.form) {
    field.form.submit();
  }
});
