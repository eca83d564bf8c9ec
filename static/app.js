// Behaviour the Content-Security-Policy keeps out of inline attributes.
// A select marked data-autosubmit sends its form when its value changes;
// the form keeps a button for when scripts do not run.
document.addEventListener("change", (event) => {
  const field = event.target.closest("[data-autosubmit]");
  if (field && field.form) {
    field.form.submit();
  }
});

// The menu's "More" is a <details>: Enter or Space opens it without scripts.
// Escape closes it and gives the focus back to "More"; a click elsewhere closes it.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  const open = document.querySelector("header.top details.more[open]");
  if (open) {
    open.removeAttribute("open");
    open.querySelector("summary").focus();
  }
});
document.addEventListener("click", (event) => {
  const open = document.querySelector("header.top details.more[open]");
  if (open && !open.contains(event.target)) open.removeAttribute("open");
});
