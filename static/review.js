// Keyboard grading on the review and adjudication screens. The forms work
// without this file; it adds the keys, the highlighted question, the grade
// shown as it follows from the answers (the server grades again), and the
// material-error fields once a material error is raised.
(function () {
  "use strict";

  var NO_CONCLUSION = "no_gradable_conclusion";

  function screen() { return document.querySelector("[data-grading-screen]"); }
  function form() { var s = screen(); return s && s.querySelector("form[data-grading-form]"); }
  function field(name) { var f = form(); return f && f.querySelector("[name=" + name + "]"); }

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

  function value(name) {
    var f = form();
    var input = f && f.querySelector("input[name=" + name + "]:checked");
    return input ? input.value : "";
  }

  function choose(name, chosen) {
    var f = form();
    var input = f && f.querySelector("input[name=" + name + "][value=" + chosen + "]");
    if (input) input.checked = true;
  }

  // The grade table the server applies, first matching row wins.
  function rules() {
    var s = screen();
    var data = s && s.querySelector("#grade-rules");
    if (!data) return [];
    if (!data._rules) data._rules = JSON.parse(data.textContent);
    return data._rules;
  }

  function derive() {
    var addressed = value("addresses_question") !== "no";
    var material = value("material_error");
    var correctness = addressed ? value("correctness") : NO_CONCLUSION;
    var fulfilment = addressed ? value("fulfilment") : "not_met";
    if (!material) return null;
    var list = rules();
    for (var i = 0; i < list.length; i++) {
      var rule = list[i];
      var fits = [[rule.material_error, material], [rule.correctness, correctness], [rule.fulfilment, fulfilment]]
        .every(function (pair) { return !pair[0].length || pair[0].indexOf(pair[1]) >= 0; });
      if (fits) return rule;
    }
    return null;
  }

  function sync() {
    var f = form();
    if (!f) return;
    f.classList.toggle("not-addressed", value("addresses_question") === "no");
    f.classList.toggle("material", value("material_error") === "yes");
    var rule = derive();
    var output = f.querySelector("[data-grade-output]");
    var text = f.querySelector("[data-rule-output]");
    if (output) output.textContent = rule ? rule.label : "—";
    if (text) text.textContent = rule ? rule.text : "follows from the answers above";
    var box = f.querySelector(".derived");
    if (box) box.classList.toggle("refused", !!rule && rule.outcome === "refused");
  }

  function answer(letter) {
    var q = current() || firstOpen();
    if (!q) return;
    var input = q.querySelector("input[value=" + letter + "]");
    if (!input) return;
    // Only answering the last open question moves on to the reason: changing
    // an answer on a filled form must not send the next keys into a text box.
    var wasOpen = !q.querySelector("input:checked");
    input.checked = true;
    sync();
    var list = questions();
    var next = list[list.indexOf(q) + 1];
    var open = firstOpen();
    highlight(open || next || q);
    if (q.dataset.key === "material_error" && letter === "yes") focusEmpty("error_claim");
    else if (wasOpen && !open) focusReason();
  }

  function move(step) {
    var list = questions();
    var q = current();
    var index = q ? list.indexOf(q) + step : 0;
    if (index >= 0 && index < list.length) highlight(list[index]);
  }

  // Where typing goes next: the claim after a material error, the reason
  // after any other outcome but resolved (both are required there).
  function focusEmpty(name) {
    var box = field(name);
    if (box && !box.value.trim()) { box.focus(); return true; }
    return false;
  }

  // Once no question is open: the reason the outcome needs. A lead's
  // decision always has one; a reader's does unless resolved, and a material
  // error's claim, evidence and effect are its reason.
  function focusReason() {
    var rule = derive();
    if (!rule || rule.outcome === "refused") return;
    if (rule.outcome === "material_error") focusEmpty("error_claim") || focusEmpty("reason");
    else if (rule.outcome === "resolved") focusEmpty("reason");
    else focusEmpty("note") || focusEmpty("reason");
  }

  // The grade keys, as the server defines them (grading.GRADE_KEYS).
  function presets() {
    var s = screen();
    var data = s && s.querySelector("#grade-keys");
    if (!data) return {};
    if (!data._keys) data._keys = JSON.parse(data.textContent);
    return data._keys;
  }

  // A grade key answers the material-error question and the two metrics; the
  // rubric questions come after them (spec 004's order), so the reason waits
  // until none is open, while a material error's claim is asked at once.
  function preset(key) {
    var values = presets()[key];
    if (!values) return;
    choose("material_error", values[0]);
    if (values[1]) choose("correctness", values[1]);
    if (values[2]) choose("fulfilment", values[2]);
    sync();
    var open = firstOpen();
    highlight(open);
    if (key === "3" && focusEmpty("error_claim")) return;
    if (!open) focusReason();
  }

  // Enter submits from everywhere on the form but a link or a button of its
  // own, and the jump list, where it opens an item; Ctrl+Enter everywhere.
  function enterSubmits(target) {
    if (!target || !target.closest) return true;
    if (target.closest("details.jump")) return false;
    if (/^(A|BUTTON|SUMMARY)$/.test(target.tagName) && !target.closest("form[data-grading-form]")) return false;
    return true;
  }

  function showSubmitKeys(target) {
    var f = form();
    var hint = f && f.querySelector("[data-submit-keys]");
    if (hint) hint.textContent = enterSubmits(target) ? "Enter" : "Ctrl+Enter";
  }

  function toggle(name) {
    var box = field(name);
    if (box) box.checked = !box.checked;
  }

  function go(attribute) {
    var url = screen().dataset[attribute];
    if (url) window.location.assign(url);
  }

  function open(id) {
    var dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  function jumpList() {
    var list = screen().querySelector("details.jump");
    if (!list) return;
    list.open = !list.open;
    var link = list.querySelector("li.current a") || list.querySelector("a");
    if (list.open && link) link.focus();
  }

  // Inside the open list: arrows move between items, Escape closes it.
  function jumpKeys(jump, event) {
    var links = Array.prototype.slice.call(jump.querySelectorAll("a"));
    var index = links.indexOf(document.activeElement);
    if (event.key === "Escape") {
      event.preventDefault();
      jump.open = false;
      document.activeElement.blur();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      var next = links[index + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) next.focus();
    }
  }

  function submit() {
    var f = form();
    if (f.requestSubmit) f.requestSubmit(); else f.submit();
  }

  document.addEventListener("keydown", function (event) {
    if (!form()) return;
    var target = event.target;
    if (event.isComposing) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      submit();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var typing = target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && !/^(radio|checkbox|submit|button)$/.test(target.type));
    if (typing) {
      if (event.key === "Escape") target.blur();
      // In a text box Enter submits, as the button says; Shift+Enter is a new line.
      else if (event.key === "Enter" && !event.shiftKey && target.closest("form[data-grading-form]")) {
        event.preventDefault();
        submit();
      }
      return;
    }
    if (document.querySelector("dialog[open]")) return;
    if (event.key === "Enter" && !enterSubmits(target)) return;
    var jump = target.closest && target.closest("details.jump");
    if (jump && event.key !== "l") { jumpKeys(jump, event); return; }
    // Arrow keys keep their own meaning inside the metric groups (radio choice).
    if (/^Arrow/.test(event.key) && target.closest && target.closest("fieldset.metric")) return;
    var keys = {
      y: function () { answer("yes"); }, n: function () { answer("no"); }, a: function () { answer("na"); },
      "1": function () { preset("1"); }, "2": function () { preset("2"); },
      "3": function () { preset("3"); }, "4": function () { preset("4"); },
      p: function () { preset("p"); },
      b: function () { toggle("borderline"); }, i: function () { toggle("needs_more_info"); },
      j: function () { go("nextUrl"); }, k: function () { go("previousUrl"); },
      l: jumpList,
      g: function () { open("guide"); }, "?": function () { open("keys"); },
      ArrowDown: function () { move(1); }, ArrowUp: function () { move(-1); },
      Enter: submit
    };
    var action = keys[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest("form[data-grading-form]")) {
      sync();
      var q = event.target.closest("fieldset.question");
      if (q) highlight(q);
      if (event.target.name === "material_error" && event.target.value === "yes") focusEmpty("error_claim");
    }
  });

  document.addEventListener("focusin", function (event) { showSubmitKeys(event.target); });
  document.addEventListener("focusout", function (event) { showSubmitKeys(event.relatedTarget); });

  // A text field grows with what is typed, up to a few lines.
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (box.tagName === "TEXTAREA" && box.closest("form[data-grading-form]")) {
      box.style.height = "auto";
      box.style.height = Math.min(box.scrollHeight + 2, 120) + "px";
    }
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest("[data-open]");
    // A link to a sheet (the guide) works without JavaScript too; here it opens the sheet instead.
    if (opener) { event.preventDefault(); open(opener.dataset.open); }
    var jump = document.querySelector("details.jump[open]");
    if (jump && !jump.contains(event.target)) jump.open = false;
  });

  function start() {
    document.documentElement.classList.add("js-ready");
    if (!form()) return;
    sync();
    showSubmitKeys(document.activeElement);
    // After a refused save: the first field to fix, else the first open question.
    var invalid = form().querySelector("fieldset.question.invalid, [aria-invalid=true]");
    if (invalid && invalid.tagName === "FIELDSET") highlight(invalid);
    else if (invalid) { highlight(firstOpen()); invalid.focus(); }
    else highlight(firstOpen() || questions()[0]);
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:afterSwap", start);
  if (document.readyState !== "loading") start();
})();
