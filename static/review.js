// Keyboard grading on the review screen. The form works without this file;
// it only adds keys, the highlighted question and the material-error fields.
(function () {
  "use strict";

  function screen() { return document.getElementById("review-screen"); }
  function form() { var s = screen(); return s && s.querySelector("form.rubric-form"); }
  function questions() {
    var f = form();
    if (!f) return [];
    return Array.prototype.filter.call(f.querySelectorAll("fieldset.question"), function (q) {
      return !q.closest(".not-addressed .after-addresses");
    });
  }
  function current() { var f = form(); return f && f.querySelector("fieldset.question.current"); }

  function highlight(fieldset) {
    questions().forEach(function (q) { q.classList.remove("current"); });
    if (fieldset) {
      fieldset.classList.add("current");
      fieldset.scrollIntoView({ block: "nearest" });
    }
  }

  function firstOpen() {
    var list = questions();
    for (var i = 0; i < list.length; i++) {
      if (!list[i].querySelector("input:checked")) return list[i];
    }
    return null;
  }

  function sync() {
    var f = form();
    if (!f) return;
    var addresses = f.querySelector("input[name=addresses_question]:checked");
    f.classList.toggle("not-addressed", !!addresses && addresses.value === "no");
    var grade = f.querySelector("input[name=grade]:checked");
    f.classList.toggle("material", !!grade && grade.value === "material_error");
  }

  function answer(value) {
    var q = current() || firstOpen();
    if (!q) return;
    var input = q.querySelector("input[value=" + value + "]");
    if (!input) return;
    input.checked = true;
    sync();
    var list = questions();
    var next = list[list.indexOf(q) + 1];
    highlight(firstOpen() || next || q);
  }

  function move(step) {
    var list = questions();
    var q = current();
    var index = q ? list.indexOf(q) + step : 0;
    if (index >= 0 && index < list.length) highlight(list[index]);
  }

  function grade(value) {
    var input = form().querySelector("input[name=grade][value=" + value + "]");
    if (input) { input.checked = true; sync(); }
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
    if (!form() || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var typing = target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && !/^(radio|checkbox|submit|button)$/.test(target.type));
    if (typing) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (document.querySelector("dialog[open]")) return;
    var keys = {
      y: function () { answer("yes"); }, n: function () { answer("no"); }, a: function () { answer("na"); },
      "1": function () { grade("resolved"); }, "2": function () { grade("partially_resolved"); },
      "3": function () { grade("material_error"); }, "4": function () { grade("unresolved"); },
      p: function () { grade("pending"); },
      b: function () { var box = form().querySelector("input[name=borderline]"); box.checked = !box.checked; },
      j: function () { go("nextUrl"); }, k: function () { go("previousUrl"); },
      g: function () { open("guide"); }, "?": function () { open("keys"); },
      ArrowDown: function () { move(1); }, ArrowUp: function () { move(-1); },
      Enter: submit
    };
    var action = keys[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest("form.rubric-form")) {
      sync();
      var q = event.target.closest("fieldset.question");
      if (q) highlight(q);
    }
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest("[data-open]");
    if (opener) open(opener.dataset.open);
  });

  function start() {
    document.documentElement.classList.add("js-ready");
    sync();
    highlight(firstOpen() || questions()[0]);
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:afterSwap", start);
  if (document.readyState !== "loading") start();
})();
