/* Blacklisting cannot be undone: before the form is sent, a dialog names the connector and says so.
 *
 * Without this script the form shows its required "I understand" checkbox, and the server refuses a POST
 * without it (400). With it, the checkbox is hidden and ticked only when the dialog is confirmed. The
 * dialog's sentences come from the page (data attributes, translated there); "{connector}" is replaced by
 * the connector chosen in the form. Loaded with the page's CSP nonce; no inline script or style.
 */
(function () {
  "use strict";
  var form = document.getElementById("blacklist-form");
  var dialog = document.getElementById("blacklist-dialog");
  if (!form || !dialog || typeof dialog.showModal !== "function") {
    return; // no <dialog> support: the checkbox stays, and the server checks it
  }
  var confirmBox = form.querySelector("input[name=confirm]");
  var confirmRow = document.getElementById("blacklist-confirm-row");
  var select = form.querySelector("select[name=connector]");
  var question = document.getElementById("blacklist-dialog-question");
  var okButton = document.getElementById("blacklist-dialog-confirm");
  var cancelButton = document.getElementById("blacklist-dialog-cancel");
  var confirmed = false;

  confirmBox.required = false;
  confirmBox.checked = false;
  confirmRow.hidden = true;

  form.addEventListener("submit", function (event) {
    if (confirmed) {
      return;
    }
    event.preventDefault();
    if (!form.reportValidity()) {
      return;
    }
    var name = select.value;
    question.textContent = form.dataset.question.replace("{connector}", name);
    okButton.textContent = form.dataset.confirm.replace("{connector}", name);
    dialog.showModal();
    cancelButton.focus();
  });

  okButton.addEventListener("click", function () {
    confirmed = true;
    confirmBox.checked = true;
    dialog.close();
    form.requestSubmit ? form.requestSubmit() : form.submit();
  });

  cancelButton.addEventListener("click", function () {
    dialog.close();
  });
})();
