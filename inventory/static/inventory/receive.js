/* The receiving page (inventory/po_receive.html): a scanner list per receipt form, a live count against
 * the line's open quantity, and the duplicate and malformed serials marked as they are scanned or pasted.
 *
 * The server decides (inventory.packing, po_line_receive): this script only helps the clerk see a mistake
 * before pressing "Receive". Enter in the scanner field adds the scan to the list instead of sending the
 * form; the list travels in the hidden "scanned" field, one serial per line, scans first and then the
 * pasted lines, which is the order the server numbers its rows in. A serial scanned a second time is not
 * added again: the one in the list is marked. Serials compare as the server compares them (trimmed, in
 * upper case: inventory.serials.normalize_serial). Without this script the form still works: Enter sends
 * the one scan in the field, and the paste box takes a whole list.
 *
 * The sentences come from the form's data attributes, translated by the page; "{n}" and "{serial}" are
 * replaced here. Loaded with the page's CSP nonce; no inline script or style.
 */
(function () {
  "use strict";

  function key(serial) {
    return serial.trim().toUpperCase();
  }

  function lines(text) {
    return text.split("\n").map(function (line) {
      return line.replace(/\r$/, "");
    }).filter(function (line) {
      return line.trim() !== "";
    });
  }

  function columnName(name) {
    return name.trim().toLowerCase().replace(/[\s-]+/g, "_");
  }

  function setUp(form) {
    var data = form.dataset;
    var pattern = new RegExp(data.pattern);
    var open = parseInt(data.open, 10);
    var columns = data.columns.split(" ");
    var serialColumns = data.serialColumns.split(" ");
    var scan = form.querySelector("[data-receipt-scan]");
    var scanned = form.querySelector("[data-receipt-scanned]");
    var paste = form.querySelector("[data-receipt-paste]");
    var list = form.querySelector("[data-receipt-list]");
    var count = form.querySelector("[data-receipt-count]");
    var countLine = form.querySelector("[data-receipt-count-line]");
    var problems = form.querySelector("[data-receipt-problems]");
    var notice = form.querySelector("[data-receipt-notice]");
    var items = lines(scanned.value);

    function text(template, values) {
      return template.replace("{n}", values.n).replace("{serial}", values.serial);
    }

    // The pasted text as the server reads it: a CSV (its serial column, header left out) or serials.
    function pasted() {
      var rows = lines(paste.value);
      if (!rows.length) {
        return {csv: false, serials: []};
      }
      var header = rows[0];
      var delimiter = (header.split(";").length > header.split(",").length) ? ";" : ",";
      var names = header.split(delimiter).map(columnName);
      var isCsv = header.indexOf(",") >= 0 || header.indexOf(";") >= 0 || columns.indexOf(names[0]) >= 0;
      if (!isCsv) {
        return {csv: false, serials: rows};
      }
      var at = names.findIndex(function (name) { return serialColumns.indexOf(name) >= 0; });
      return {
        csv: true,
        serials: rows.slice(1).map(function (row) {
          return at >= 0 ? (row.split(delimiter)[at] || "") : row;
        }),
      };
    }

    function update() {
      scanned.value = items.join("\n");
      var fromPaste = pasted();
      var all = fromPaste.csv ? fromPaste.serials : items.concat(fromPaste.serials);
      var seen = {};
      var duplicates = [];
      var invalid = [];
      all.forEach(function (serial, index) {
        var k = key(serial);
        if (!pattern.test(serial)) {
          invalid.push(serial);
        } else if (seen[k] !== undefined) {
          duplicates.push(text(data.textDuplicateOf, {serial: serial, n: seen[k] + 1}));
        } else {
          seen[k] = index;
        }
      });
      count.textContent = String(all.length);
      countLine.classList.toggle("over", all.length > open);
      countLine.dataset.over = all.length > open ? "true" : "false";
      var sentences = [];
      if (fromPaste.csv && items.length) {
        sentences.push(data.textCsvAlone);
      }
      if (all.length > open) {
        sentences.push(text(data.textOver, {n: open, serial: ""}));
      }
      if (duplicates.length) {
        sentences.push(data.textDuplicates + " " + duplicates.join(", "));
      }
      if (invalid.length) {
        sentences.push(data.textInvalid + " " + invalid.join(", "));
      }
      problems.textContent = sentences.join(" ");
      problems.hidden = sentences.length === 0;
    }

    function draw(marked) {
      list.textContent = "";
      items.forEach(function (serial, index) {
        var item = document.createElement("li");
        item.dataset.serial = serial;
        var label = document.createElement("span");
        label.className = "mono";
        label.textContent = serial;
        item.appendChild(label);
        var problem = !pattern.test(serial) ? data.textInvalidOne : (index === marked ? data.textScannedTwice : "");
        if (problem) {
          item.classList.add(index === marked ? "duplicate" : "invalid");
          var note = document.createElement("span");
          note.className = "note";
          note.textContent = problem;
          item.appendChild(note);
        }
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "link";
        remove.textContent = data.textRemove;
        remove.setAttribute("aria-label", text(data.textRemoveOne, {serial: serial, n: index + 1}));
        remove.addEventListener("click", function () {
          items.splice(index, 1);
          notice.textContent = "";
          draw(-1);
          update();
          scan.focus();
        });
        item.appendChild(remove);
        list.appendChild(item);
      });
    }

    function add() {
      var serial = scan.value;
      scan.value = "";
      if (serial.trim() === "") {
        return;
      }
      var at = items.findIndex(function (item) { return key(item) === key(serial); });
      if (at >= 0) {
        notice.textContent = text(data.textAlready, {serial: serial, n: at + 1});
        draw(at);
      } else {
        items.push(serial);
        notice.textContent = "";
        draw(-1);
      }
      update();
    }

    scan.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault(); // a scanner ends each serial with Enter: add it, do not send the form
        add();
      }
    });
    paste.addEventListener("input", update);
    form.addEventListener("submit", function () {
      add(); // a serial left in the scanner field goes with the list
    });
    draw(-1);
    update();
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-receipt]"), setUp);
})();
