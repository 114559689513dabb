// The machinery every trial page shares: the countdown (from the server's deadline), browser
// timings and focus events, submitting the answer and showing the result. The benchmark's
// widget (widgets/<benchmark>.js) builds the answer and draws the truth beside it afterwards.
//
// The browser's record of the trial (`client`, sent with the answer or the time-out; times are
// performance.now() milliseconds since this page was loaded): loaded_ms when this script ran;
// shown_ms on the first animation frame after the widget has drawn the stimulus (its pictures
// loaded and decoded); first_input_ms at the first edit and answer_changes for every edit;
// submit_ms / timeout_ms when the answer / the time-out request is sent; the window's inner size
// (viewport) then; and blur/focus/hidden/visible events. The server works out from the events how
// long the page was hidden; a reload starts a new record.
//
// A widget module exports mount(form, view, hooks) and returns {answer(), showResult(data)}:
//   answer()       -> the answer object sent to the server; throws Error(message) if incomplete
//   showResult(d)  -> draw d.truth beside d.answer (d is the server's result JSON)
//   hooks.touched() is called on every edit: the first-input time and the edits are recorded.
//   draft() / restore(draft)  -> the unfinished answer as plain data, and back (optional). The
//                     draft is kept in this browser's localStorage under the trial's id on every
//                     edit, so a reload or a crash in the middle of a trial loses no work, and is
//                     dropped once the answer is final. It never holds anything the server sent.
//
// Every word the page shows goes through Django's JavaScript catalogue (gettext, ngettext and
// interpolate, globals defined by /jsi18n/ before this module runs), so it reads in the page's language.
import { post as send } from "../js/http.js";

const data = JSON.parse(document.getElementById("trial-data").textContent);
const form = document.getElementById("trial");
// The answer goes by fetch; Enter in a field never sends the form itself.
form.addEventListener("submit", (event) => event.preventDefault());
const problem = document.getElementById("problem");
const submitButton = document.getElementById("submit");
const client = { loaded_ms: now(), answer_changes: 0, events: [] };
let closed = false;

// performance.now() to a tenth of a millisecond, as the server keeps it.
function now() {
  return Math.round(performance.now() * 10) / 10;
}

function record(type) {
  client.events.push({ type, t: now() });
}
window.addEventListener("blur", () => record("blur"));
window.addEventListener("focus", () => record("focus"));
document.addEventListener("visibilitychange", () => record(document.hidden ? "hidden" : "visible"));
if (document.hidden) record("hidden"); // opened in a background tab: hidden from the start

// The window's inner size in CSS pixels and its device pixel ratio, or nothing if the browser
// reports a size the server would not take (a window of no size).
function viewport() {
  const size = { width: window.innerWidth, height: window.innerHeight, dpr: window.devicePixelRatio };
  const fits = (value, high) => Number.isFinite(value) && value > 0 && value <= high;
  if (!fits(size.width, 100000) || !fits(size.height, 100000) || !fits(size.dpr, 16)) return undefined;
  return size;
}

// Resolves once every picture in the form has loaded (or failed to) and is decoded, so that the
// next animation frame paints the whole stimulus. The widget's own load handlers ran before.
function picturesReady() {
  const pictures = [...form.querySelectorAll("img")].filter((image) => image.getAttribute("src"));
  return Promise.allSettled(
    pictures.map((image) =>
      (image.complete
        ? Promise.resolve()
        : new Promise((resolve) => {
            image.addEventListener("load", resolve, { once: true });
            image.addEventListener("error", resolve, { once: true });
          })
      ).then(() => image.decode()),
    ),
  );
}

const draftKey = `yardstick:trial-draft:${data.trial}`;
let widget = null;

function saveDraft() {
  if (!widget || !widget.draft || closed) return;
  try {
    localStorage.setItem(draftKey, JSON.stringify({ draft: widget.draft() }));
  } catch {
    // storage full or disabled: the answer still works, only the draft is not kept
  }
}

function savedDraft() {
  try {
    return JSON.parse(localStorage.getItem(draftKey) || "null");
  } catch {
    return null;
  }
}

const hooks = {
  touched() {
    if (client.first_input_ms === undefined) client.first_input_ms = now();
    client.answer_changes += 1;
    problem.textContent = ""; // an earlier refusal no longer applies once the answer changes
    saveDraft();
  },
};

// Sends an answer or a draft; a failure to reach the server or an answer that is not JSON becomes
// an error the page can show.
async function post(url, body) {
  const reply = await send(url, body);
  if (reply.status === 0) reply.payload = { error: gettext("The server could not be reached; nothing was sent. Try again") };
  else if (!reply.json) reply.payload = { error: interpolate(gettext("server error %(status)s"), { status: reply.status }, true) };
  return reply;
}

function formatSeconds(seconds) {
  return seconds === null || seconds === undefined ? "–" : interpolate(gettext("%(seconds)s s"), { seconds: seconds.toFixed(1) }, true);
}

function showResult(widget, result) {
  closed = true;
  localStorage.removeItem(draftKey);
  const clock = document.getElementById("clock");
  clock.classList.remove("urgent");
  clock.textContent = result.figures.timed_out ? gettext("time is up") : gettext("answered");
  form.classList.add("closed");
  form.querySelectorAll("input, select, button, textarea").forEach((element) => (element.disabled = true));
  const figures = result.figures;
  const verdict = document.getElementById("verdict");
  if (figures.timed_out) verdict.textContent = gettext("Time is up");
  else verdict.textContent = figures.correct ? gettext("Correct") : gettext("Not correct");
  verdict.className = figures.correct ? "good" : "bad";
  const parts = [interpolate(gettext("Time used: %(time)s"), { time: formatSeconds(figures.seconds) }, true)];
  const hasDistance = figures.distance !== null && figures.distance !== undefined;
  if (hasDistance) parts.push(interpolate(gettext("distance: %(distance)s"), { distance: figures.distance }, true));
  else if (figures.headline_label && typeof figures.headline === "number")
    parts.push(`${figures.headline_label}: ${figures.headline.toFixed(3)}`);
  document.getElementById("figures").textContent = parts.join(" · ");
  if (result.guidance) {
    const guidance = document.getElementById("guidance");
    guidance.textContent = result.guidance;
    guidance.hidden = false;
  }
  widget.showResult(result, document.getElementById("comparison"));
  const why = document.getElementById("why");
  why.replaceChildren(
    ...(result.why || []).map((line) => {
      const item = document.createElement("li");
      item.textContent = line;
      return item;
    }),
  );
  why.hidden = !why.children.length;
  document.getElementById("result").hidden = false;
  document.getElementById("next").focus();
}

function startClock(widget) {
  const remaining = document.getElementById("remaining");
  if (data.remaining_ms === null || !remaining) return;
  const end = performance.now() + data.remaining_ms;
  let announced = null;
  const tick = async () => {
    if (closed) return;
    const left = Math.max(0, end - performance.now());
    const seconds = Math.ceil(left / 1000);
    remaining.textContent = interpolate(gettext("%(seconds)s s"), { seconds }, true);
    // Screen readers hear the time at a few moments, not four times a second.
    if ([60, 30, 10].includes(seconds) && announced !== seconds) {
      announced = seconds;
      document.getElementById("clock-announce").textContent = interpolate(
        ngettext("%(seconds)s second left", "%(seconds)s seconds left", seconds),
        { seconds },
        true,
      );
    }
    remaining.parentElement.classList.toggle("urgent", left < 10000);
    if (left > 0) {
      setTimeout(tick, Math.min(250, left));
      return;
    }
    client.timeout_ms = now();
    client.viewport = viewport();
    const { ok, payload } = await post(data.timeout_url, { client });
    if (ok) showResult(widget, payload);
    else setTimeout(tick, 500); // the server's clock is a little behind; ask again
  };
  tick();
}

async function submit(widget) {
  if (closed) return;
  problem.textContent = "";
  let answer;
  try {
    answer = widget.answer();
  } catch (error) {
    problem.textContent = error.message;
    return;
  }
  client.submit_ms = now();
  client.viewport = viewport();
  submitButton.disabled = true;
  const { ok, status, payload } = await post(data.answer_url, { answer, client });
  submitButton.disabled = false;
  if (ok) {
    showResult(widget, payload);
  } else if (status === 409) {
    problem.textContent = interpolate(gettext("%(error)s. Reload the page to go on."), { error: payload.error }, true);
  } else {
    problem.textContent = payload.field ? `${payload.field}: ${payload.error}` : payload.error;
  }
}

const module = await import(data.widget);
widget = module.mount(form, data.view, hooks);
const saved = savedDraft();
if (saved && widget.restore) widget.restore(saved.draft);
// The stimulus is on screen from the first frame painted after it is drawn (no frame is painted
// while the page is hidden, so a trial opened in a background tab starts when it is looked at).
picturesReady().then(() =>
  requestAnimationFrame(() => {
    client.shown_ms = now();
    document.body.dataset.stimulusShown = "1";
  }),
);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  submit(widget);
});
startClock(widget);
document.body.dataset.trialReady = "1";
