// Follows a model run on its page until the run has ended, then reloads for the result.
import {ACTIVE, STATUS_WORDS, poll} from "../js/poll.js";

const card = document.getElementById("run");
const statusLabel = document.getElementById("run-status");
const stage = document.getElementById("run-stage");
const bar = document.getElementById("run-progress");
const count = document.getElementById("run-count");
const errorLine = document.getElementById("run-error");
const taken = document.getElementById("run-taken");

function render(run) {
  statusLabel.textContent = STATUS_WORDS[run.status] || run.status;
  statusLabel.dataset.status = run.status;
  stage.textContent = run.stage || "";
  bar.value = run.percent;
  count.textContent = `${run.done} / ${run.total}`;
  errorLine.textContent = run.error || "";
  errorLine.hidden = !run.error;
  // When a worker took the run, as the page writes it (UTC, to the second).
  if (run.started_at && taken) taken.textContent = run.started_at.replace("T", " ").slice(0, 19);
  if (ACTIVE.has(run.status)) return true;
  window.location.reload();
  return false;
}

if (ACTIVE.has(statusLabel.dataset.status)) poll(card.dataset.url, {every: 700, first: 500, json: true, onAnswer: render});
