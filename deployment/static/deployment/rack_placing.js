/* The rack page's placing form (templates/deployment/_placing.html, deployment/rack_views.py), for PMs.

   Every free U of the front and the rear elevation is a target (rect.slot-free[data-face], drawn by
   deployment/elevation.py). With a server picked, its height (the option's data-height; 1 U while none is
   picked or the height is unknown) decides where it fits: a free U starts a fit when that U and the ones above
   it, as many as the server is high, are all free. Pointing at a free U shows the range the server would take;
   clicking it (or Enter or Space on a focused U) fills the lowest U and the face into the form: the clicked U
   itself where the server fits from there, else the highest start below it whose range still covers it. A U
   where the server cannot fit says so and fills nothing.

   The server decides (placement_create): an occupied U, another customer's room or an overloaded circuit are
   refused there, with the service's message. Without this script the form still works: the lowest U is typed
   and the face picked. The sentences come from the form's data attributes, translated by the page. A static
   file: the Content-Security-Policy refuses inline scripts. */
(function () {
  "use strict";

  function ready(callback) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", callback);
    } else {
      callback();
    }
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  ready(function () {
    var form = document.getElementById("placing-form");
    if (!form) {
      return;
    }
    var server = form.querySelector("#id_server");
    var lowest = form.querySelector("#id_lowest_u");
    var face = form.querySelector("#id_face");
    var note = form.querySelector("[data-placing-note]");
    var targets = Array.prototype.slice.call(
      document.querySelectorAll(".elevation rect.slot-free[data-face]")
    );
    if (!server || !lowest || !face || !targets.length) {
      return;
    }
    var free = {};
    targets.forEach(function (target) {
      free[target.getAttribute("data-u")] = true;
    });

    function height() {
      var option = server.options[server.selectedIndex];
      var value = option ? parseInt(option.getAttribute("data-height") || "1", 10) : 1;
      return value > 0 ? value : 1;
    }

    function fits(low, size) {
      for (var u = low; u < low + size; u += 1) {
        if (!free[String(u)]) {
          return false;
        }
      }
      return true;
    }

    // The start of a fit that covers `u`: `u` itself if the server fits from there, else the highest below.
    function startFor(u, size) {
      for (var low = u; low > u - size && low >= 1; low -= 1) {
        if (fits(low, size)) {
          return low;
        }
      }
      return null;
    }

    function mark(name, side, low, size) {
      targets.forEach(function (target) {
        var u = parseInt(target.getAttribute("data-u"), 10);
        var on = side !== null && low !== null && target.getAttribute("data-face") === side &&
          u >= low && u < low + size;
        if (on) {
          target.setAttribute(name, "");
        } else {
          target.removeAttribute(name);
        }
      });
    }

    function refresh() {
      var size = height();
      targets.forEach(function (target) {
        var u = parseInt(target.getAttribute("data-u"), 10);
        target.setAttribute("data-fits", startFor(u, size) === null ? "no" : "yes");
      });
      var low = parseInt(lowest.value, 10);
      mark("data-chosen", isNaN(low) ? null : face.value, isNaN(low) ? null : low, size);
    }

    function preview(target) {
      var size = height();
      var low = startFor(parseInt(target.getAttribute("data-u"), 10), size);
      mark("data-preview", target.getAttribute("data-face"), low, size);
    }

    function pick(target) {
      var size = height();
      var u = parseInt(target.getAttribute("data-u"), 10);
      var low = startFor(u, size);
      if (low === null) {
        note.textContent = fill(form.getAttribute("data-no-fit"), {height: size, u: u});
        return;
      }
      lowest.value = String(low);
      face.value = target.getAttribute("data-face");
      refresh();
      var sentence = face.value === "rear" ? "data-chosen-rear" : "data-chosen-front";
      note.textContent = fill(form.getAttribute(sentence), {low: low, top: low + size - 1});
      var box = note.getBoundingClientRect();
      if (box.top < 0 || box.bottom > window.innerHeight) {
        note.scrollIntoView({block: "center"});
      }
    }

    targets.forEach(function (target) {
      target.addEventListener("click", function () {
        pick(target);
      });
      target.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          pick(target);
        }
      });
      target.addEventListener("mouseenter", function () {
        preview(target);
      });
      target.addEventListener("focus", function () {
        preview(target);
      });
      target.addEventListener("mouseleave", function () {
        mark("data-preview", null, null, 0);
      });
      target.addEventListener("blur", function () {
        mark("data-preview", null, null, 0);
      });
    });
    server.addEventListener("change", refresh);
    lowest.addEventListener("input", refresh);
    face.addEventListener("change", refresh);
    refresh();
  });
})();
