// The run upload form. Without scripts it sends as any form does; with them
// it shows that it is working while the file is sent (and, when tasks run
// in-process, stored and scored before the page answers), and it points out a
// log in the combined form as soon as one is chosen, before the server would
// refuse it.
(() => {
  const form = document.querySelector("form[data-upload]");
  if (!form) {
    return;
  }
  const button = form.querySelector("button[type=submit]");
  const idle = button.textContent;

  form.addEventListener("submit", () => {
    // Disabled once the submission is under way: a second click would send the file twice.
    button.disabled = true;
    button.textContent = button.dataset.busy;
    form.setAttribute("aria-busy", "true");
  });
  // A page restored by the back button would otherwise keep its disabled button.
  window.addEventListener("pageshow", () => {
    button.disabled = false;
    button.textContent = idle;
    form.removeAttribute("aria-busy");
  });

  const file = form.querySelector("input[type=file]");
  const setFromFile = form.querySelector("input[name=set_from_file]");
  const notice = document.getElementById("combined-notice");
  if (!file || !setFromFile || !notice) {
    return;
  }
  file.addEventListener("change", async () => {
    notice.hidden = true;
    const chosen = file.files[0];
    // A gzip file cannot be read here; the server explains it if need be.
    if (!chosen || chosen.name.endsWith(".gz")) {
      return;
    }
    // The first lines are enough: a header line, then answers.
    const head = await chosen.slice(0, 256 * 1024).text();
    const combined = head
      .split("\n")
      .slice(0, 3)
      .some((line) => {
        try {
          const record = JSON.parse(line);
          return record !== null && typeof record === "object"
            && ("expected_values" in record || "expected_behaviour" in record);
        } catch {
          return false;
        }
      });
    if (combined) {
      setFromFile.checked = true;
      notice.hidden = false;
    }
  });
})();
