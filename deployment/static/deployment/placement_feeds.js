/* The admin's placement form (deployment/forms.py, PlacementForm): the feeds offered are the chosen rack's
   only. Each feed option carries its rack's id in data-rack; when the rack changes, the other racks' feeds
   are hidden and unselected (the form refuses them anyway, naming them). With no rack chosen every feed
   shows, each named with its rack. A static file: the Content-Security-Policy refuses inline scripts. */
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
    var rack = document.getElementById("id_rack");
    var feeds = document.getElementById("id_feeds");
    if (!rack || !feeds) {
      return;
    }
    function limit() {
      var chosen = rack.value;
      Array.prototype.forEach.call(feeds.options, function (option) {
        var other = chosen !== "" && option.getAttribute("data-rack") !== chosen;
        option.hidden = other;
        option.disabled = other;
        if (other) {
          option.selected = false;
        }
      });
    }
    rack.addEventListener("change", limit);
    limit();
  });
})();
