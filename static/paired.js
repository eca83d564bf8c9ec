// Keyboard grading on the paired screen. The form works without this file;
// it only adds keys and the highlight that says which answer a key grades.
(function () {
  "use strict";

  function screen() { return document.getElementById("pair-screen"); }
  function form() { var s = screen(); return s && s.querySelector("form.pair-form"); }
  function steps() {
    var f = form();
    return f ? Array.prototype.slice.call(f.querySelectorAll("fieldset.question")) : [];
  }
  function current() { var f = form(); return f && f.querySelector("fieldset.question.current"); }

  function highlight(fieldset) {
    steps().forEach(function (step) { step.classList.remove("current"); });
    var place = fieldset && fieldset.dataset.place;
    screen().querySelectorAll(".pair-answer").forEach(function (column) {
      column.classList.toggle("current", !!place && column.dataset.place === place);
    });
    if (fieldset) {
      fieldset.classList.add("current");
      fieldset.scrollIntoView({ block: "nearest" });
    }
  }

  function firstOpen() {
    var list = steps();
    for (var i = 0; i < list.length; i++) {
      if (!list[i].querySelector("input[type=radio]:checked")) return list[i];
    }
    return null;
  }

  function after(step) {
    var list = steps();
    return firstOpen() || list[list.indexOf(step) + 1] || step;
  }

  function grade(value) {
    var step = current();
    if (!step || !step.classList.contains("pair-grade")) {
      var grading = steps().filter(function (s) { return s.classList.contains("pair-grade"); });
      step = grading.filter(function (s) { return !s.querySelector("input:checked"); })[0] || grading[0];
    }
    var input = step.querySelector("input[value='" + value + "']");
    if (!input) return;
    input.checked = true;
    if (value === "resolved") {
      highlight(after(step));
    } else {
      // Anything but resolved needs a reason: straight to the note.
      highlight(step);
      step.querySelector("textarea").focus();
    }
  }

  function prefer(value) {
    var input = form().querySelector("input[name=better][value='" + value + "']");
    if (input) { input.checked = true; highlight(input.closest("fieldset")); }
  }

  function move(step) {
    var list = steps();
    var index = current() ? list.indexOf(current()) + step : 0;
    if (index >= 0 && index < list.length) highlight(list[index]);
  }

  function go(attribute) {
    var url = screen().dataset[attribute];
    if (url) window.location.assign(url);
  }

  function open(id) {
    var dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  function submit() {
    var f = form();
    if (f.requestSubmit) f.requestSubmit(); else f.submit();
  }

  document.addEventListener("keydown", function (event) {
    if (!form() || event.metaKey || event.altKey) return;
    var target = event.target;
    var typing = target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && !/^(radio|checkbox|submit|button)$/.test(target.type));
    if (typing) {
      if (event.key === "Enter" && event.ctrlKey) { event.preventDefault(); submit(); }
      if (event.key === "Escape") {
        var step = target.closest("fieldset.question");
        target.blur();
        if (step) highlight(after(step));
      }
      return;
    }
    if (event.ctrlKey || document.querySelector("dialog[open]")) return;
    var keys = {
      "1": function () { grade("resolved"); }, "2": function () { grade("partially_resolved"); },
      "3": function () { grade("material_error"); }, "4": function () { grade("unresolved"); },
      p: function () { grade("pending"); },
      ArrowLeft: function () { prefer("1"); }, ArrowRight: function () { prefer("2"); },
      "=": function () { prefer("equal"); },
      ArrowDown: function () { move(1); }, ArrowUp: function () { move(-1); },
      j: function () { go("nextUrl"); }, k: function () { go("previousUrl"); },
      g: function () { open("pair-guide"); }, "?": function () { open("pair-keys"); },
      Enter: submit
    };
    var action = keys[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  document.addEventListener("change", function (event) {
    var step = event.target.closest && event.target.closest("form.pair-form fieldset.question");
    if (step) highlight(step);
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest("[data-open]");
    if (opener) open(opener.dataset.open);
  });

  // A submit that is on its way cannot be sent again: the one-time key makes
  // a second one harmless, and this spares the reader a second round trip.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var f = form();
    if (f && event.target === f) {
      if (f.dataset.sending) { event.preventDefault(); return; }
      f.dataset.sending = "1";
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var f = form();
    if (f && event.target === f) delete f.dataset.sending;
  });

  function start() {
    if (!screen()) return;
    document.documentElement.classList.add("js-ready");
    var error = form().querySelector(".field-error");
    highlight(error ? error.closest("fieldset") : firstOpen() || steps()[0]);
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:afterSwap", start);
  if (document.readyState !== "loading") start();
})();
