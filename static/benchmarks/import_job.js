// Follows an import job on its page: polls the API until the worker has finished.
const card = document.getElementById("job");
const statusLabel = document.getElementById("job-status");
const stage = document.getElementById("job-stage");
const bar = document.getElementById("job-progress");
const count = document.getElementById("job-count");
const result = document.getElementById("job-result");
const errorList = document.getElementById("job-errors");
const meter = document.getElementById("job-meter");
const nothingLoaded = document.getElementById("job-nothing");

const LABELS = {
  pending: gettext("Waiting for a worker"),
  running: gettext("Running"),
  succeeded: gettext("Succeeded"),
  failed: gettext("Failed"),
};

function render(job) {
  statusLabel.textContent = LABELS[job.status] || job.status;
  statusLabel.dataset.status = job.status;
  stage.textContent = job.progress.stage || "";
  bar.value = job.progress.percent;
  count.textContent = `${job.progress.done} / ${job.progress.total}`;
  meter.hidden = job.status === "failed";
  nothingLoaded.hidden = job.status !== "failed";
  if (job.dataset) {
    result.replaceChildren();
    const link = document.createElement("a");
    link.href = `${card.dataset.datasetBase}${job.dataset}/`;
    link.textContent = gettext("Open the dataset");
    result.append(link);
  }
  errorList.replaceChildren(...job.errors.map((text) => {
    const entry = document.createElement("li");
    entry.textContent = text;
    return entry;
  }));
}

async function poll() {
  const response = await fetch(card.dataset.url, {headers: {Accept: "application/json"}, credentials: "same-origin"});
  if (!response.ok) return;
  const job = await response.json();
  render(job);
  if (job.status === "pending" || job.status === "running") setTimeout(poll, 700);
}

if (statusLabel.dataset.status === "pending" || statusLabel.dataset.status === "running") poll();
