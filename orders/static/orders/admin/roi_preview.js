/* Live preview of an ROI assessment on the admin's add form (orders/admin.py, ROIAssessmentAdmin).
   As the PM types, the form's values are posted (with the CSRF token the form carries) to the admin's
   preview view, which computes them with the same service that saves them, and the figures or the
   field that is wrong are shown in #roi-preview. A static file: the Content-Security-Policy refuses
   inline scripts. */
(function () {
  "use strict";

  function ready(callback) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", callback);
    } else {
      callback();
    }
  }

  ready(function () {
    var box = document.getElementById("roi-preview");
    if (!box) {
      return;
    }
    var form = box.closest("form");
    if (!form) {
      return;
    }
    var url = box.getAttribute("data-url");
    var timer = null;
    var sequence = 0;
    var touched = false;

    function clearMarks() {
      form.querySelectorAll(".roi-preview-bad").forEach(function (row) {
        row.classList.remove("roi-preview-bad");
      });
    }

    function element(tag, text, className) {
      var node = document.createElement(tag);
      if (text !== undefined && text !== null) {
        node.textContent = text;
      }
      if (className) {
        node.className = className;
      }
      return node;
    }

    function showResult(data) {
      clearMarks();
      box.replaceChildren();
      var verdict;
      if (!data.pays_back) {
        verdict = "Never pays back: the monthly net is not positive.";
      } else if (data.meets_target) {
        verdict = "Meets the payback target of " + data.target_payback_months + " months.";
      } else {
        verdict = "Misses the payback target of " + data.target_payback_months + " months.";
      }
      box.appendChild(element("p", verdict, "roi-preview-verdict"));
      // Label and figure pairs in a grid of two pairs a row: the box stays low at the window's bottom.
      var list = element("dl", null, "roi-preview-figures");
      data.rows.forEach(function (row) {
        list.appendChild(element("dt", row.label));
        var figure = element("dd", row.text, "num");
        figure.setAttribute("data-key", row.key);
        list.appendChild(figure);
      });
      box.appendChild(list);
    }

    function showMissing(data) {
      // A value not entered yet is no error: before the PM types, the intro stays; after, the preview says
      // which input it still needs, without marking the row.
      if (!touched) {
        return;
      }
      clearMarks();
      box.replaceChildren();
      var text = "Still needed for the result: " + (data.label || data.field) + ".";
      var hint = element("p", text, "roi-preview-missing wb-muted");
      hint.setAttribute("data-field", data.field || "");
      box.appendChild(hint);
    }

    function showError(data) {
      if (data.code === "required") {
        showMissing(data);
        return;
      }
      clearMarks();
      box.replaceChildren();
      var message = (data.label || data.field || "Input") + ": " + (data.message || data.error || "invalid.");
      var error = element("p", message, "roi-preview-error");
      error.setAttribute("role", "alert");
      error.setAttribute("data-field", data.field || "");
      box.appendChild(error);
      var row = data.field ? form.querySelector(".form-row.field-" + data.field) : null;
      if (row) {
        row.classList.add("roi-preview-bad");
      }
    }

    function update() {
      var mine = ++sequence;
      var body = new FormData(form);
      var token = form.querySelector("input[name=csrfmiddlewaretoken]");
      fetch(url, {
        method: "POST",
        body: body,
        credentials: "same-origin",
        headers: token ? { "X-CSRFToken": token.value } : {},
      })
        .then(function (response) {
          return response.json().then(function (data) {
            return { ok: response.ok, data: data };
          });
        })
        .then(function (answer) {
          if (mine !== sequence) {
            return; // a later request is on its way: show only the newest values' result
          }
          if (answer.ok) {
            showResult(answer.data);
          } else {
            showError(answer.data);
          }
        })
        .catch(function () {
          if (mine === sequence) {
            showError({ field: "", message: "The preview could not be computed (no connection)." });
          }
        });
    }

    function soon() {
      touched = true;
      window.clearTimeout(timer);
      timer = window.setTimeout(update, 300);
    }

    form.addEventListener("input", soon);
    form.addEventListener("change", soon);
    update();
  });
})();
