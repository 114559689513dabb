// The annotator's page: question-answer pairs about the text in a scene image, each with the
// quadrilateral around the text its answer is read from. Round 1 writes the pairs; round 2 (a
// second opinion, blind) answers the first annotator's questions.
//
// The server's side is described in the annotation contract (task-data, save, heartbeat, submit,
// skip). What this page promises: no work is lost. The draft goes to localStorage on every change
// (with the server version it is based on) and to the server ~800 ms after the last change and
// when the page is hidden; a draft that never reached the server is restored and sent on the next
// load; a version conflict shows both versions; a lost lease keeps the browser's copy.
import {
  QuadEditor,
  exposeForTests,
  format,
  isTyping,
  languageOf,
  make,
  quadText,
  readLabels,
} from "./quad_editor.js";
import { post } from "../js/http.js";

const SAVE_DELAY_MS = 800;
const RETRY_MS = 5000;

const labels = readLabels();
// The server took the task away: the lease ran out (409), or the person left the project (403).
const stopped = (status, payload) => status === 409 || payload.error === "not_member";
const page = document.getElementById("author-page");
const $ = (id) => document.getElementById(id);
let session = null; // everything about the task on screen; replaced when the next one comes

// ---- the draft as plain data ----

const emptyPair = () => ({ question: "", answer: "", evidence: null, source: null, ocr_confirmed: false });

function cleanPair(pair) {
  const evidence = Array.isArray(pair && pair.evidence) && pair.evidence.length === 8 ? pair.evidence.map(Number) : null;
  return {
    question: typeof pair?.question === "string" ? pair.question : "",
    answer: typeof pair?.answer === "string" ? pair.answer : "",
    evidence,
    source: pair?.source ?? null,
    ocr_confirmed: Boolean(pair?.ocr_confirmed),
  };
}

const draftPairs = (draft) => (draft && Array.isArray(draft.pairs) ? draft.pairs.map(cleanPair) : []);
const sameDraft = (a, b) => JSON.stringify(draftPairs(a)) === JSON.stringify(draftPairs(b));

// The pairs on screen for `draft`: round 2 has one per fixed question, whatever the draft says.
function pairsFor(task, draft) {
  const saved = draftPairs(draft);
  if (task.round !== 2) return saved.length ? saved : [emptyPair()];
  return task.fixed_questions.map((fixed) => {
    const pair = saved.find((candidate) => candidate.source === fixed.source) || emptyPair();
    return { ...pair, question: fixed.question, source: fixed.source };
  });
}

const isComplete = (pair) => pair.question.trim() && pair.answer.trim() && pair.evidence;

// ---- localStorage: the browser's copy ----

const storageKey = (task) => `yardstick-annotation-${task.assignment}`;

function readLocal(task) {
  try {
    return JSON.parse(localStorage.getItem(storageKey(task)) || "null");
  } catch {
    return null;
  }
}

function writeLocal(s) {
  try {
    localStorage.setItem(storageKey(s.task), JSON.stringify({ base: s.version, draft: draftOf(s), at: Date.now() }));
  } catch {
    // storage full or disabled: the server's copy is still saved
  }
}

function dropLocal(task) {
  try {
    localStorage.removeItem(storageKey(task));
  } catch {
    // nothing kept, nothing to drop
  }
}

const draftOf = (s) => ({ pairs: s.pairs.map(cleanPair) });

// ---- status line ----

function showStatus(state) {
  const status = $("save-status");
  status.dataset.state = state;
  status.textContent = labels[state] || "";
}

function setVersion(s, version) {
  s.version = version;
  page.dataset.version = String(version);
}

// ---- saving ----

function changed(s) {
  if (s !== session) return;
  writeLocal(s);
  if (s.blocked) return; // kept in this browser until the conflict or lost lease is dealt with
  s.dirty = true;
  showStatus("saving");
  clearTimeout(s.timer);
  s.timer = setTimeout(() => saveNow(s), SAVE_DELAY_MS);
}

// Sends the draft until the server holds the latest one; one request at a time.
function saveNow(s, options = {}) {
  clearTimeout(s.timer);
  if (!s.inFlight) s.inFlight = saveLoop(s, options).finally(() => (s.inFlight = null));
  return s.inFlight;
}

async function saveLoop(s, { keepalive = false } = {}) {
  clearTimeout(s.retry);
  while (s.dirty && !s.blocked && s === session) {
    s.dirty = false;
    const sent = draftOf(s);
    showStatus("saving");
    const { ok, status, payload } = await post(s.task.urls.save, { version: s.version, draft: sent }, { keepalive });
    if (s !== session) return false;
    if (ok) {
      setVersion(s, payload.version);
      writeLocal(s);
      continue;
    }
    s.dirty = true;
    if (status === 409 && payload.error === "stale") showConflict(s, payload, sent);
    else if (stopped(status, payload)) leaseLost(s, payload.message);
    else {
      showStatus("offline");
      s.retry = setTimeout(() => saveNow(s), RETRY_MS);
    }
    return false;
  }
  if (!s.blocked && s === session) showStatus("saved");
  return !s.blocked;
}

// ---- conflicts and a lost lease ----

function conflictList(list, pairs, other) {
  list.replaceChildren(
    ...pairs.map((pair, index) => {
      const differs = JSON.stringify(cleanPair(pair)) !== JSON.stringify(cleanPair(other[index] || emptyPair()));
      return make("li", { class: differs ? "differs" : "" }, [
        make("div", { class: "q", text: pair.question || labels.empty }),
        make("div", { class: "a", text: pair.answer || labels.empty }),
        make("div", { class: "quad-numbers", text: quadText(pair.evidence) }),
      ]);
    }),
  );
}

function showConflict(s, payload, mine) {
  s.blocked = "conflict";
  s.server = payload.server || { version: s.version, draft: { pairs: [] } };
  const serverPairs = draftPairs(s.server.draft);
  const panel = $("conflict");
  panel.querySelector(".message").textContent = payload.message || "";
  panel.querySelector(".server-version").textContent = format(labels.server_version, { n: s.server.version });
  conflictList($("conflict-mine"), draftOf(s).pairs, serverPairs);
  conflictList($("conflict-server"), serverPairs, mine.pairs);
  panel.hidden = false;
  showStatus("conflict");
  panel.scrollIntoView({ block: "nearest" });
}

function keepMine(s) {
  if (s.blocked !== "conflict") return;
  setVersion(s, s.server.version);
  s.blocked = null;
  $("conflict").hidden = true;
  s.dirty = true;
  writeLocal(s);
  saveNow(s);
}

function takeServer(s) {
  if (s.blocked !== "conflict") return;
  setVersion(s, s.server.version);
  s.blocked = null;
  s.dirty = false;
  $("conflict").hidden = true;
  s.pairs = pairsFor(s.task, s.server.draft);
  s.selected = Math.min(s.selected, s.pairs.length - 1);
  s.editor.setQuads(s.pairs.map((pair) => pair.evidence), s.selected);
  renderPairs(s);
  writeLocal(s);
  showStatus("saved");
}

function leaseLost(s, message) {
  s.blocked = "lease";
  stopHeartbeat(s);
  writeLocal(s);
  const panel = $("lease-lost");
  panel.querySelector(".message").textContent = message || "";
  $("next-task").href = s.task.urls.queue;
  panel.hidden = false;
  $("submit").disabled = true;
  $("save-now").disabled = true;
  showStatus("lease_lost");
}

// ---- heartbeat ----

function startHeartbeat(s) {
  const seconds = Math.max(5, Math.min(s.task.heartbeat_s || 60, (s.task.lease_seconds || 240) / 4, 60));
  s.beatMs = seconds * 1000;
  s.lastBeat = Date.now();
  s.heartbeat = setInterval(() => {
    if (!document.hidden) beat(s);
  }, s.beatMs);
}

function stopHeartbeat(s) {
  clearInterval(s.heartbeat);
  s.heartbeat = null;
}

async function beat(s) {
  if (s !== session || s.blocked === "lease") return;
  s.lastBeat = Date.now();
  const { status, payload } = await post(s.task.urls.heartbeat, {});
  if (s === session && stopped(status, payload)) leaseLost(s, payload.message);
}

document.addEventListener("visibilitychange", () => {
  const s = session;
  if (!s || s.closed) return;
  if (document.hidden) {
    if (s.dirty && !s.blocked) saveNow(s, { keepalive: true });
  } else if (s.heartbeat && Date.now() - s.lastBeat >= s.beatMs) {
    beat(s);
  }
});
window.addEventListener("pagehide", () => {
  const s = session;
  if (s && !s.closed && s.dirty && !s.blocked) saveNow(s, { keepalive: true });
});
window.addEventListener("online", () => {
  const s = session;
  if (s && s.dirty && !s.blocked) saveNow(s);
});

// ---- the list of pairs ----

function itemOf(index) {
  return $("pairs").children[index] || null;
}

function renderPairs(s) {
  const template = $("pair-template");
  const fixed = s.task.round === 2;
  $("pairs").replaceChildren(
    ...s.pairs.map((pair, index) => {
      const item = template.content.firstElementChild.cloneNode(true);
      item.dataset.index = String(index);
      item.querySelector(".pair-number").textContent = format(labels.pair_number, { n: index + 1 });
      const question = item.querySelector(".pair-question");
      const answer = item.querySelector(".pair-answer");
      question.value = pair.question;
      answer.value = pair.answer;
      if (fixed) {
        item.querySelector(".pair-question-field").hidden = true;
        item.querySelector(".pair-question-fixed").hidden = false;
        item.querySelector(".pair-question-text").textContent = pair.question;
        item.querySelector(".pair-delete").remove();
      }
      if (pair.returned) {
        const note = item.querySelector(".pair-returned");
        note.textContent = format(labels.returned_pair, { reason: pair.returned });
        note.hidden = false;
        item.classList.add("returned");
      }
      return item;
    }),
  );
  s.pairs.forEach((pair, index) => updatePair(s, index));
  updateCount(s);
}

// The parts of a pair's row that follow its data: language, evidence status, errors, selection.
function updatePair(s, index) {
  const item = itemOf(index);
  const pair = s.pairs[index];
  if (!item || !pair) return;
  item.classList.toggle("selected", index === s.selected);
  item.setAttribute("aria-current", index === s.selected ? "true" : "false");
  const language = languageOf(pair.question);
  const languageNode = item.querySelector(".pair-language");
  languageNode.dataset.language = language;
  languageNode.textContent = pair.question.trim() ? labels[`lang_${language}`] : "";
  const quad = item.querySelector(".pair-quad");
  quad.dataset.drawn = pair.evidence ? "true" : "false";
  quad.textContent = pair.evidence ? labels.quad_drawn : labels.quad_missing;
  const draw = item.querySelector(".pair-draw");
  draw.firstChild.textContent = `${pair.evidence ? labels.redraw : labels.draw} `;
  item.dataset.complete = isComplete(pair) ? "true" : "false";
  renderErrors(s, index);
}

function updateCount(s) {
  const wanted = s.task.round === 2 ? s.task.fixed_questions.length : s.task.pairs_wanted;
  const done = s.pairs.filter(isComplete).length;
  const count = $("pair-count");
  count.textContent = format(labels.pair_count, { done, wanted });
  count.dataset.done = String(done);
  count.dataset.wanted = String(wanted);
  count.classList.toggle("enough", done >= wanted);
}

function selectPair(s, index, { scroll = true } = {}) {
  if (index < 0 || index >= s.pairs.length) return;
  const previous = s.selected;
  s.selected = index;
  s.editor.select(index);
  updatePair(s, previous);
  updatePair(s, index);
  if (scroll) reveal($("pairs"), itemOf(index));
}

// Scrolls `list` alone so that `item` shows in it: the page, and the image on it, stay put.
function reveal(list, item) {
  const shown = list.getBoundingClientRect();
  const box = item.getBoundingClientRect();
  if (box.top < shown.top) list.scrollTop -= shown.top - box.top;
  else if (box.bottom > shown.bottom) list.scrollTop += Math.min(box.bottom - shown.bottom, box.top - shown.top);
}

function addPair(s) {
  if (s.task.round === 2) return;
  s.pairs.push(emptyPair());
  s.editor.addQuad(null);
  renderPairs(s);
  selectPair(s, s.pairs.length - 1);
  itemOf(s.pairs.length - 1).querySelector(".pair-question").focus({ preventScroll: true });
  changed(s);
}

function deletePair(s, index) {
  if (s.task.round === 2 || index < 0 || index >= s.pairs.length) return;
  s.pairs.splice(index, 1);
  s.editor.removeQuad(index);
  s.errors = [];
  if (!s.pairs.length) {
    s.pairs.push(emptyPair());
    s.editor.addQuad(null);
  }
  s.selected = Math.min(s.selected > index ? s.selected - 1 : s.selected, s.pairs.length - 1);
  s.editor.select(s.selected); // the editor moved its selection the same way; this only confirms it
  renderPairs(s);
  changed(s);
}

function drawEvidence(s, index = s.selected) {
  if (s.blocked === "lease") return;
  selectPair(s, index);
  if (document.activeElement instanceof HTMLElement && isTyping({ target: document.activeElement })) {
    document.activeElement.blur();
  }
  s.editor.startDrawing(index);
}

// Edits typed into a pair's fields (one listener for the whole list).
function bindList(s) {
  const list = $("pairs");
  list.oninput = (event) => {
    const item = event.target.closest(".pair");
    if (!item) return;
    const index = Number(item.dataset.index);
    const pair = s.pairs[index];
    if (event.target.classList.contains("pair-question")) {
      pair.question = event.target.value;
      clearErrors(s, index, "question");
    } else if (event.target.classList.contains("pair-answer")) {
      pair.answer = event.target.value;
      pair.ocr_confirmed = false; // the confirmation was about the answer as it was
      clearErrors(s, index, "answer");
    } else return;
    updatePair(s, index);
    updateCount(s);
    changed(s);
  };
  // "The answer is right" under an OCR warning: the server takes the answer as it is.
  list.onchange = (event) => {
    if (!event.target.classList.contains("confirm-ocr-input")) return;
    const index = Number(event.target.closest(".pair").dataset.index);
    s.pairs[index].ocr_confirmed = event.target.checked;
    changed(s);
  };
  list.onfocusin = (event) => {
    const item = event.target.closest(".pair");
    if (item && Number(item.dataset.index) !== s.selected) selectPair(s, Number(item.dataset.index), { scroll: false });
  };
  list.onclick = (event) => {
    const item = event.target.closest(".pair");
    if (!item) return;
    const index = Number(item.dataset.index);
    if (event.target.closest(".pair-delete")) deletePair(s, index);
    else if (event.target.closest(".pair-draw")) drawEvidence(s, index);
    else if (index !== s.selected) selectPair(s, index, { scroll: false });
  };
  // Enter in a question goes on to its answer; Enter in an answer goes on to the evidence.
  list.onkeydown = (event) => {
    if (event.key !== "Enter" || event.ctrlKey || event.metaKey || event.isComposing) return;
    const item = event.target.closest(".pair");
    if (!item) return;
    const index = Number(item.dataset.index);
    if (event.target.classList.contains("pair-question")) {
      event.preventDefault();
      item.querySelector(".pair-answer").focus({ preventScroll: true });
    } else if (event.target.classList.contains("pair-answer")) {
      event.preventDefault();
      event.target.blur();
      if (!s.pairs[index].evidence) drawEvidence(s, index);
    }
  };
}

// ---- errors from the server ----

function clearErrors(s, index, field) {
  const before = s.errors.length;
  s.errors = s.errors.filter((error) => !(error.pair === index && error.field === field));
  if (field === "answer" || field === "evidence") {
    s.errors = s.errors.filter((error) => !(error.pair === index && error.confirmable));
  }
  if (s.errors.length !== before) renderErrors(s, index);
}

function renderErrors(s, index) {
  const item = itemOf(index);
  if (!item) return;
  const pair = s.pairs[index];
  const errors = s.errors.filter((error) => error.pair === index);
  item.querySelector(".pair-errors").replaceChildren(
    ...errors.map((error) => {
      const line = make("li", { class: "error", "data-field": error.field || "", "data-code": error.code || "" }, [
        make("span", { class: "message", text: error.message }),
      ]);
      if (error.confirmable) {
        const box = make("input", { type: "checkbox", class: "confirm-ocr-input" });
        box.checked = pair.ocr_confirmed;
        line.append(make("label", { class: "confirm-ocr" }, [box, ` ${labels.answer_is_right}`]));
      }
      return line;
    }),
  );
  for (const field of ["question", "answer"]) {
    const input = item.querySelector(`.pair-${field}`);
    if (errors.some((error) => error.field === field && !error.confirmable)) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  item.classList.toggle("has-errors", errors.length > 0);
  item.classList.toggle("evidence-invalid", errors.some((error) => error.field === "evidence" && !error.confirmable));
}

function showErrors(s, errors) {
  s.errors = (errors || []).map((error) => ({ ...error, pair: Number.isInteger(error.pair) ? error.pair : null }));
  s.pairs.forEach((pair, index) => renderErrors(s, index));
  const general = s.errors.filter((error) => error.pair === null || !s.pairs[error.pair]);
  $("form-errors").replaceChildren(
    ...general.map((error) =>
      make("li", { class: "error", "data-field": error.field || "", "data-code": error.code || "", text: error.message }),
    ),
  );
  const first = s.errors.find((error) => error.pair !== null && s.pairs[error.pair]);
  if (first) selectPair(s, first.pair);
}

function formError(text) {
  $("form-errors").replaceChildren(make("li", { class: "error", text }));
}

// ---- submit and skip ----

async function settle(s) {
  clearTimeout(s.timer);
  if (s.dirty && !s.blocked) await saveNow(s);
  else if (s.inFlight) await s.inFlight;
}

async function submit(s) {
  if (s.busy || s.blocked) return;
  s.editor.cancelDrawing();
  s.busy = true;
  $("submit").disabled = true;
  $("form-errors").replaceChildren();
  await settle(s);
  if (s !== session || s.blocked) {
    s.busy = false;
    $("submit").disabled = s.blocked === "lease";
    return;
  }
  const pairs = draftOf(s).pairs;
  const { ok, status, payload } = await post(s.task.urls.submit, { version: s.version, pairs });
  s.busy = false;
  $("submit").disabled = false;
  if (s !== session) return;
  if (ok) finish(s, payload.next, labels.submitted);
  else if (status === 400) showErrors(s, payload.errors);
  else if (status === 409 && payload.error === "stale") showConflict(s, payload, { pairs });
  else if (stopped(status, payload)) leaseLost(s, payload.message);
  else formError(status === 0 ? labels.unreachable : payload.message || labels.server_error);
}

function openSkip(s) {
  if (s.blocked === "lease") return;
  $("skip-form").hidden = false;
  $("skip-reason").focus();
}

function closeSkip() {
  $("skip-form").hidden = true;
  $("skip-error").textContent = "";
}

async function skip(s) {
  if (s.busy) return;
  const reason = $("skip-reason").value.trim();
  if (!reason) {
    $("skip-error").textContent = labels.reason_needed;
    $("skip-reason").focus();
    return;
  }
  s.busy = true;
  $("skip-confirm").disabled = true;
  await settle(s);
  const { ok, status, payload } = await post(s.task.urls.skip, { version: s.version, reason });
  s.busy = false;
  $("skip-confirm").disabled = false;
  if (s !== session) return;
  if (ok) finish(s, payload.next, "");
  else if (status === 400) {
    $("skip-error").textContent = (payload.errors || []).map((error) => error.message).join(" ") || labels.server_error;
  } else if (status === 409 && payload.error === "stale") {
    closeSkip();
    showConflict(s, payload, draftOf(s));
  } else if (stopped(status, payload)) leaseLost(s, payload.message);
  else $("skip-error").textContent = status === 0 ? labels.unreachable : payload.message || labels.server_error;
}

// The task is done with (submitted or skipped): on to the next one without a reload.
function finish(s, next, message) {
  s.closed = true;
  clearTimeout(s.timer);
  clearTimeout(s.retry);
  stopHeartbeat(s);
  dropLocal(s.task);
  if (next) {
    load(next);
    history.replaceState(history.state, "", window.location.href);
    const flash = $("flash");
    flash.textContent = message;
    flash.hidden = !message;
    clearTimeout(finish.flashTimer);
    finish.flashTimer = setTimeout(() => (flash.hidden = true), 4000);
    return;
  }
  session.editor.destroy();
  session = null;
  delete window.yardstickEditor;
  $("work").hidden = true;
  $("no-more").hidden = false;
  $("round-label").textContent = "";
  page.dataset.assignment = "";
  showStatus("");
}

// ---- keys ----

function onKey(event) {
  const s = session;
  if (!s) return;
  const ctrl = event.ctrlKey || event.metaKey;
  const key = event.key;
  if (ctrl && key === "Enter") {
    event.preventDefault();
    if (event.target === $("skip-reason")) skip(s);
    else submit(s);
    return;
  }
  if (ctrl && key.toLowerCase() === "s" && !event.altKey) {
    event.preventDefault();
    if (!s.blocked) {
      s.dirty = true;
      writeLocal(s);
      saveNow(s);
    }
    return;
  }
  if (key === "Escape") {
    if (s.editor.handleKey(event)) event.preventDefault();
    else if (!$("skip-form").hidden) closeSkip();
    else if (isTyping(event)) event.target.blur();
    return;
  }
  if (isTyping(event) || event.isComposing) return;
  if (s.editor.handleKey(event)) {
    event.preventDefault();
    return;
  }
  if (ctrl || event.altKey || event.repeat) return;
  const lower = key.toLowerCase();
  if (lower === "n") addPair(s);
  else if (lower === "d" || lower === "q") drawEvidence(s);
  else if (lower === "s") openSkip(s);
  else if (/^[1-9]$/.test(key)) selectPair(s, Number(key) - 1);
  else return;
  event.preventDefault();
}

// ---- a task on screen ----

function load(task) {
  if (session) {
    session.closed = true;
    stopHeartbeat(session);
    session.editor.destroy();
  }
  const s = {
    task,
    version: task.version,
    pairs: pairsFor(task, task.draft),
    selected: 0,
    errors: [],
    dirty: false,
    blocked: null,
    busy: false,
    closed: false,
  };
  session = s;
  setVersion(s, task.version);
  // Newer work from this browser that never reached the server comes back, and is sent.
  const local = readLocal(task);
  if (local && local.base === task.version && !sameDraft(local.draft, task.draft)) {
    s.pairs = pairsFor(task, local.draft);
    s.dirty = true;
  }
  for (const returned of task.returned_pairs || []) {
    if (s.pairs[returned.index]) s.pairs[returned.index].returned = returned.reason;
  }

  page.dataset.assignment = String(task.assignment);
  page.dataset.round = String(task.round);
  $("round-label").textContent = task.round === 2 ? labels.round2 : labels.round1;
  $("round-note").hidden = task.round !== 2;
  $("add-pair").hidden = task.round === 2;
  const banner = $("return-reason");
  banner.querySelector(".reason").textContent = task.return_reason || "";
  banner.hidden = !task.return_reason;
  for (const id of ["conflict", "lease-lost", "skip-form"]) $(id).hidden = true;
  $("skip-reason").value = "";
  $("skip-error").textContent = "";
  $("form-errors").replaceChildren();
  $("submit").disabled = false;
  $("save-now").disabled = false;
  $("work").hidden = false;
  $("no-more").hidden = true;

  s.editor = new QuadEditor($("canvas-frame"), {
    width: task.image_width,
    height: task.image_height,
    imageUrl: task.image_url,
    quads: s.pairs.map((pair) => pair.evidence),
    onChange(index, quad) {
      const pair = s.pairs[index];
      if (!pair) return;
      pair.evidence = quad;
      pair.ocr_confirmed = false;
      clearErrors(s, index, "evidence");
      updatePair(s, index);
      updateCount(s);
      changed(s);
    },
    onSelect(index) {
      selectPair(s, index);
    },
    onState({ drawing, corners }) {
      $("draw-status").textContent =
        drawing === null ? "" : format(labels.drawing, { pair: drawing + 1, n: corners });
      for (const item of $("pairs").children) item.classList.toggle("drawing", Number(item.dataset.index) === drawing);
    },
  });
  exposeForTests(s.editor);
  renderPairs(s);
  bindList(s);
  startHeartbeat(s);
  if (s.dirty) {
    writeLocal(s);
    saveNow(s);
  } else {
    showStatus("saved");
  }
  document.body.dataset.annotationReady = "1";
  return s;
}

function start() {
  const task = JSON.parse($("task-data").textContent);
  if (!task) return;
  $("add-pair").addEventListener("click", () => session && addPair(session));
  $("submit").addEventListener("click", () => session && submit(session));
  $("save-now").addEventListener("click", () => {
    if (!session || session.blocked) return;
    session.dirty = true;
    saveNow(session);
  });
  $("skip").addEventListener("click", () => session && openSkip(session));
  $("skip-confirm").addEventListener("click", () => session && skip(session));
  $("skip-cancel").addEventListener("click", closeSkip);
  $("keep-mine").addEventListener("click", () => session && keepMine(session));
  $("take-server").addEventListener("click", () => session && takeServer(session));
  window.addEventListener("keydown", onKey);
  load(task);
}

start();
