// Follows a model run on its page: polls until the run has ended, then reloads for the result.
const card = document.getElementById("run");
const statusLabel = document.getElementById("run-status");
const stage = document.getElementById("run-stage");
const bar = document.getElementById("run-progress");
const count = document.getElementById("run-count");
const errorLine = document.getElementById("run-error");
const taken = document.getElementById("run-taken");

const LABELS = {
  queued: gettext("Queued"),
  running: gettext("Running"),
  finished: gettext("Finished"),
  failed: gettext("Failed"),
  cancelled: gettext("Cancelled"),
};
const ACTIVE = new Set(["queued", "running"]);

function render(run) {
  statusLabel.textContent = LABELS[run.status] || run.status;
  statusLabel.dataset.status = run.status;
  stage.textContent = run.stage || "";
  bar.value = run.percent;
  count.textContent = `${run.done} / ${run.total}`;
  errorLine.textContent = run.error || "";
  errorLine.hidden = !run.error;
  // When a worker took the run, as the page writes it (UTC, to the second).
  if (run.started_at && taken) taken.textContent = run.started_at.replace("T", " ").slice(0, 19);
}

async function poll() {
  const response = await fetch(card.dataset.url, {headers: {Accept: "application/json"}, credentials: "same-origin"});
  if (!response.ok) return;
  const run = await response.json();
  render(run);
  if (ACTIVE.has(run.status)) setTimeout(poll, 700);
  else window.location.reload();
}

if (ACTIVE.has(statusLabel.dataset.status)) setTimeout(poll, 500);
