// The Participants page keeps its progress counts current: every 15 seconds it reads them again
// from the API (the same figures as the page) and writes them into the page, while it is shown.
// Its words ("no cap", "min") come from the JavaScript catalogue (gettext, interpolate: /jsi18n/).
import { poll } from "../js/poll.js";

const progress = document.getElementById("progress");
const source = progress?.dataset.source;
const fields = {
  arrived: "count-arrived",
  consented: "count-consented",
  in_practice: "count-practice",
  running: "count-running",
  finished: "count-finished",
  screened_out: "count-screened",
  declined: "count-declined",
  returned: "count-returned",
};

function refresh(answer) {
  const data = answer.progress;
  for (const [key, id] of Object.entries(fields)) {
    const cell = document.getElementById(id);
    if (cell && key in data) cell.textContent = String(data[key]);
  }
  const left = document.getElementById("places-left");
  if (left && "places_left" in data) left.textContent = data.places_left === null ? gettext("no cap") : String(data.places_left);
  const median = document.getElementById("median-minutes");
  if (median && "median_minutes" in data) {
    median.textContent =
      data.median_minutes === null ? "–" : interpolate(gettext("%(minutes)s min"), { minutes: data.median_minutes }, true);
  }
  progress.dataset.refreshed = new Date().toISOString();
  return true;
}

if (source) poll(source, { every: 15000, json: true, whileHidden: false, onAnswer: refresh });
