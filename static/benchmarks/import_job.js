// Follows an import job on its page until the worker has finished.
import {ACTIVE, STATUS_WORDS, poll} from "../js/poll.js";

const card = document.getElementById("job");
const statusLabel = document.getElementById("job-status");
const stage = document.getElementById("job-stage");
const bar = document.getElementById("job-progress");
const count = document.getElementById("job-count");
const result = document.getElementById("job-result");
const errorList = document.getElementById("job-errors");
const meter = document.getElementById("job-meter");
const nothingLoaded = document.getElementById("job-nothing");

function render(job) {
  statusLabel.textContent = STATUS_WORDS[job.status] || job.status;
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
  return ACTIVE.has(job.status);
}

if (ACTIVE.has(statusLabel.dataset.status)) poll(card.dataset.url, {every: 700, first: 0, json: true, onAnswer: render});
