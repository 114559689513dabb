// The reviewer's page: one question-answer pair over its image, to Accept as it is, Fix (the
// question, the answer or the evidence's corners, edited here) or Reject with a reason. When the
// pair changed on the server meanwhile (409 stale), both versions are shown side by side: apply
// this review on top of the current version, or take the current one and look again.
import { QuadEditor, exposeForTests, format, isTyping, languageOf, make, quadText, readLabels, round1 } from "./quad_editor.js";
import { post } from "../js/http.js";

const labels = readLabels();
const $ = (id) => document.getElementById(id);
const data = JSON.parse($("pair-data").textContent);
const page = $("review-page");

const state = {
  version: data.version,
  original: { question: data.question, answer: data.answer, evidence: data.evidence },
  sent: null, // the last request, to apply again on top of a newer version
  server: null,
  busy: false,
};

const sameQuad = (a, b) => JSON.stringify(a || null) === JSON.stringify(b || null);

function current() {
  return { question: $("question").value, answer: $("answer").value, evidence: editor.quad(0) };
}

function isChanged() {
  const now = current();
  return (
    now.question !== state.original.question || now.answer !== state.original.answer || !sameQuad(now.evidence, state.original.evidence)
  );
}

// ---- what the panel shows ----

function refresh() {
  const now = current();
  const changed = isChanged();
  $("fix").disabled = !changed || state.busy;
  $("accept").disabled = changed || state.busy;
  $("reject").disabled = state.busy;
  $("reject-confirm").disabled = state.busy;
  $("revert").hidden = !changed;
  $("changed-note").hidden = !changed;
  page.dataset.changed = changed ? "true" : "false";
  page.dataset.version = String(state.version);
  $("language").textContent = labels[`lang_${languageOf(now.question)}`];
  $("language").dataset.language = languageOf(now.question);
  $("evidence-text").textContent = quadText(now.evidence);
  $("pair-label").textContent = format(labels.pair, { n: data.pair, version: state.version });
}

function showFacts() {
  $("annotator").textContent = data.annotator || "–";
  $("ocr-text").textContent = data.ocr_text || "–";
  const similarity = data.ocr_similarity;
  $("ocr-similarity").textContent = typeof similarity === "number" ? similarity.toFixed(2) : "–";
  $("ocr-confirmed").hidden = !data.ocr_confirmed;
  $("ocr-confirmed-label").hidden = !data.ocr_confirmed;
}

function load(values) {
  $("question").value = values.question;
  $("answer").value = values.answer;
  editor.setQuads([values.evidence], 0);
  clearErrors();
  refresh();
}

// ---- history: what each version changed ----

// Words (and each Chinese character on its own), spaces and marks: the units a text diff compares.
const tokens = (text) => (text || "").match(/[\u4e00-\u9fa5]|[\p{L}\p{N}_]+|\s+|[^\s]/gu) || [];

// The longest common subsequence of the tokens: runs of "same", "del" and "ins".
export function textDiff(before, after) {
  const a = tokens(before);
  const b = tokens(after);
  const table = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const runs = [];
  const push = (type, text) => {
    const last = runs[runs.length - 1];
    if (last && last.type === type) last.text += text;
    else runs.push({ type, text });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push("same", a[i]);
      i += 1;
      j += 1;
    } else if (table[i + 1][j] >= table[i][j + 1]) push("del", a[i++]);
    else push("ins", b[j++]);
  }
  while (i < a.length) push("del", a[i++]);
  while (j < b.length) push("ins", b[j++]);
  return runs;
}

function diffNode(field, before, after) {
  const runs = textDiff(before, after).map((run) =>
    run.type === "same" ? document.createTextNode(run.text) : make(run.type, { text: run.text }),
  );
  return make("p", { class: "diff", "data-field": field }, [make("span", { class: "diff-label", text: `${labels[field]}:` }), ...runs]);
}

const corner = (quad, index) => (Array.isArray(quad) ? `(${round1(quad[index * 2])}, ${round1(quad[index * 2 + 1])})` : "–");

function cornersNode(before, after) {
  const lines = [];
  for (let index = 0; index < 4; index += 1) {
    const from = corner(before, index);
    const to = corner(after, index);
    if (from !== to) lines.push(make("li", { text: format(labels.corner, { n: index + 1, from, to }) }));
  }
  return make("div", { class: "diff", "data-field": "evidence" }, [
    make("span", { class: "diff-label", text: `${labels.evidence}:` }),
    make("ul", { class: "corners" }, lines),
  ]);
}

function when(text) {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text || "" : date.toLocaleString();
}

function showHistory() {
  const entries = [...(data.history || [])].sort((a, b) => a.version - b.version);
  $("history").replaceChildren(
    ...entries.map((entry, position) => {
      const previous = entries[position - 1];
      const head = make("div", { class: "history-head" }, [
        make("span", { class: "version", text: `v${entry.version}` }),
        make("span", { class: "kind", "data-kind": entry.kind, text: labels[`kind_${entry.kind}`] || entry.kind }),
        make("span", { class: "author", text: entry.author || "" }),
        make("time", { datetime: entry.created_at || "", text: when(entry.created_at) }),
      ]);
      const body = [];
      if (!previous) {
        body.push(
          make("p", { class: "diff", "data-field": "question" }, [make("span", { class: "diff-label", text: `${labels.question}:` }), entry.question]),
          make("p", { class: "diff", "data-field": "answer" }, [make("span", { class: "diff-label", text: `${labels.answer}:` }), entry.answer]),
          make("p", { class: "diff quad-numbers", "data-field": "evidence", text: quadText(entry.evidence) }),
        );
      } else {
        if (entry.question !== previous.question) body.push(diffNode("question", previous.question, entry.question));
        if (entry.answer !== previous.answer) body.push(diffNode("answer", previous.answer, entry.answer));
        if (!sameQuad(entry.evidence, previous.evidence)) body.push(cornersNode(previous.evidence, entry.evidence));
        if (!body.length) body.push(make("p", { class: "diff muted", text: labels.no_change }));
      }
      if (entry.reason) body.push(make("p", { class: "diff", "data-field": "reason" }, [make("span", { class: "diff-label", text: `${labels.reason}:` }), entry.reason]));
      return make("li", { class: "history-entry", "data-version": entry.version, "data-kind": entry.kind }, [head, ...body]);
    }),
  );
}

// ---- errors ----

function clearErrors() {
  for (const list of document.querySelectorAll(".field-errors")) list.replaceChildren();
  $("review-errors").replaceChildren();
  for (const id of ["question", "answer", "reject-reason"]) $(id).removeAttribute("aria-invalid");
}

function showErrors(errors) {
  clearErrors();
  for (const error of errors || []) {
    const list = document.querySelector(`.field-errors[data-field="${CSS.escape(error.field || "")}"]`) || $("review-errors");
    list.append(make("li", { class: "error", "data-field": error.field || "", "data-code": error.code || "", text: error.message }));
    const input = { question: "question", answer: "answer", reason: "reject-reason" }[error.field];
    if (input) $(input).setAttribute("aria-invalid", "true");
    if (error.field === "reason") $("reject-form").hidden = false;
  }
}

// ---- the three actions ----

async function send(body) {
  if (state.busy) return;
  state.busy = true;
  state.sent = body;
  $("review-status").textContent = labels.sending;
  refresh();
  const { ok, status, payload } = await post(data.urls.review, { ...body, version: state.version });
  state.busy = false;
  $("review-status").textContent = "";
  refresh();
  if (ok) {
    finish(payload.next, payload.done);
  } else if (status === 400) {
    showErrors(payload.errors);
  } else if (status === 409 && payload.server) {
    showConflict(payload);
  } else {
    const message = status === 0 ? labels.unreachable : payload.message || payload.error || labels.server_error;
    showErrors([{ field: null, message }]);
  }
}

// After a review: the next pair (whose page says what was done to this one), or the end, saying it.
function finish(next, done) {
  if (next) {
    page.dataset.done = "true";
    window.location.assign(next);
    return;
  }
  editor.destroy();
  $("review-work").hidden = true;
  $("review-done").textContent = done || "";
  $("nothing-left").hidden = false;
  page.dataset.done = "true";
}

function accept() {
  if (isChanged()) return;
  send({ action: "accept", ...state.original, reason: "" });
}

function fix() {
  if (!isChanged()) return;
  editor.cancelDrawing();
  send({ action: "fix", ...current(), reason: "" });
}

function openReject() {
  $("reject-form").hidden = false;
  $("reject-reason").focus();
}

function closeReject() {
  $("reject-form").hidden = true;
}

function reject() {
  const reason = $("reject-reason").value.trim();
  if (!reason) {
    showErrors([{ field: "reason", code: "required", message: labels.reason_needed }]);
    $("reject-reason").focus();
    return;
  }
  send({ action: "reject", ...state.original, reason });
}

// ---- 409: the pair changed meanwhile ----

function facts(list, values, other) {
  const row = (field, text, differs) =>
    make("div", { class: `conflict-field${differs ? " differs" : ""}`, "data-field": field }, [
      make("dt", { text: labels[field] }),
      make("dd", { text }),
    ]);
  const rows = [
    row("question", values.question, values.question !== other.question),
    row("answer", values.answer, values.answer !== other.answer),
    row("evidence", quadText(values.evidence), !sameQuad(values.evidence, other.evidence)),
  ];
  if (values.reason) rows.push(row("reason", values.reason, false));
  if (values.review) {
    const text = values.reviewed_by ? format(labels.reviewed_by, { review: values.review, who: values.reviewed_by }) : values.review;
    rows.push(row("review", text, false));
  }
  list.replaceChildren(...rows);
}

function showConflict(payload) {
  const server = payload.server || {};
  state.server = server;
  const panel = $("conflict");
  panel.querySelector(".message").textContent = payload.message || "";
  panel.querySelector(".mine-action").textContent = labels[`action_${state.sent.action}`] || state.sent.action;
  panel.querySelector(".server-version").textContent = format(labels.server_version, { n: server.version });
  facts($("conflict-mine"), state.sent, server);
  facts($("conflict-server"), server, state.sent);
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
}

function applyMine() {
  if (!state.server) return;
  state.version = state.server.version;
  $("conflict").hidden = true;
  const body = state.sent;
  state.server = null;
  send(body);
}

function takeTheirs() {
  const server = state.server;
  if (!server) return;
  state.version = server.version;
  state.original = { question: server.question, answer: server.answer, evidence: server.evidence };
  state.server = null;
  $("conflict").hidden = true;
  load(state.original);
}

// ---- keys ----

function onKey(event) {
  const ctrl = event.ctrlKey || event.metaKey;
  if (page.dataset.done === "true") return;
  if (ctrl && event.key === "Enter" && event.target === $("reject-reason")) {
    event.preventDefault();
    reject();
    return;
  }
  if (event.key === "Escape") {
    if (editor.handleKey(event)) event.preventDefault();
    else if (!$("reject-form").hidden) closeReject();
    else if (isTyping(event)) event.target.blur();
    return;
  }
  if (isTyping(event) || event.isComposing) return;
  if (editor.handleKey(event)) {
    event.preventDefault();
    return;
  }
  if (ctrl || event.altKey || event.repeat) return;
  const key = event.key.toLowerCase();
  if (key === "a") accept();
  else if (key === "f") fix();
  else if (key === "r") openReject();
  else if (key === "d" || key === "q") editor.startDrawing(0);
  else return;
  event.preventDefault();
}

// ---- start ----

const editor = new QuadEditor($("canvas-frame"), {
  width: data.image_width,
  height: data.image_height,
  imageUrl: data.image_url,
  quads: [data.evidence],
  context: (data.other_pairs || []).map((pair) => pair.evidence),
  onChange() {
    $("evidence-text").textContent = quadText(editor.quad(0));
    refresh();
  },
  onState({ drawing, corners }) {
    $("draw-status").textContent = drawing === null ? "" : format(labels.drawing, { n: corners });
  },
});
exposeForTests(editor);

$("question").value = data.question;
$("answer").value = data.answer;
$("question").addEventListener("input", refresh);
$("answer").addEventListener("input", refresh);
$("accept").addEventListener("click", accept);
$("fix").addEventListener("click", fix);
$("reject").addEventListener("click", openReject);
$("reject-confirm").addEventListener("click", reject);
$("reject-cancel").addEventListener("click", closeReject);
$("redraw").addEventListener("click", () => editor.startDrawing(0));
$("revert").addEventListener("click", () => load(state.original));
$("apply-mine").addEventListener("click", applyMine);
$("take-theirs").addEventListener("click", takeTheirs);
window.addEventListener("keydown", onKey);
showFacts();
showHistory();
refresh();
document.body.dataset.annotationReady = "1";
