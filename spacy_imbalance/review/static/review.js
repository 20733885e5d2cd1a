// The review page of spacy-imbalance audit: one suspect at a time, decided
// from the keyboard, kept in localStorage, exported as Prodigy-style JSONL.
// Served by `spacy-imbalance review` (over HTTP), it also sends its state to the
// server a moment after each change, which writes it next to the page: browsers do
// not promise to keep a file: page's localStorage.
// Every action changes one suspect's entry and redraws only the card (the
// suspect and a few dozen tokens around it), so a keypress costs the same
// with 50 suspects or 5,000.
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("review-data").textContent);
  const suspects = data.suspects;
  const total = suspects.length;
  const labels = data.labels;
  const STORAGE_KEY = "spacy-imbalance/review/" + data.key;
  const FORMAT = 1;  // of the stored state: a stored state of another format is not read
  const CONTEXT = 25;  // tokens shown on either side of the suspect
  const HISTORY = 1000;  // undo steps kept (and stored)
  const ANSWERS = { a: "accept", r: "reject", i: "ignore" };
  const CODES = { accept: "a", reject: "r", ignore: "i" };
  const PAST = { accept: "Accepted", reject: "Rejected", ignore: "Skipped" };

  const $ = (id) => document.getElementById(id);
  const ui = {
    card: $("review-card"), position: $("review-position"), context: $("review-context"), edit: $("review-edit"),
    progress: $("review-progress"), counts: $("review-counts"), status: $("review-status"), label: $("review-label"),
    undo: $("review-undo"), startLeft: $("review-start-left"), startRight: $("review-start-right"),
    endLeft: $("review-end-left"), endRight: $("review-end-right"), previous: $("review-previous"), next: $("review-next"),
  };

  // An entry is the reviewer's version of a suspect: {answer: null | "accept" |
  // "reject" | "ignore", label, start, end} (token indices, end exclusive).
  // Only suspects the reviewer touched have one.
  let entries = new Map();
  let cursor = 0;  // the suspect shown; total when past the last one
  let history = [];  // {index, before: entry or undefined, cursor}
  const counts = { accept: 0, reject: 0, ignore: 0 };
  let storageError = null;
  const SERVED = /^https?:$/.test(location.protocol);  // by `spacy-imbalance review`, not opened as a file
  const DECISIONS_URL = "/decisions/" + data.key;
  // the server answers only requests with the token of the address it printed
  const TOKEN = new URLSearchParams(location.search).get("token") || "";
  let serverError = null;
  const SEND_DELAY = 300;  // ms: one request per pause in the typing, not per keypress
  const RETRY_DELAY = 2000;  // ms: after a failed save, the same state again until it lands
  let sending = false;  // one request at a time
  let timer = null;
  // false until the server's copy was read (or found missing): a page that could
  // not read it must not write over it
  let mayWrite = false;
  let lastChange = 0;
  // the revision (ETag) of the server's decisions this page last read or wrote: a save
  // names it, and one made after another tab saved is refused (409) and merged
  let revision = null;
  // the suspects this tab changed since its last save landed (pending) and in the save on its way
  const dirty = new Set();
  let inFlight = new Set();

  // spaCy's offsets count code points; JavaScript strings count UTF-16 units,
  // two for an emoji: text is cut through an array of code points per document
  const codePoints = new Map();
  function cut(doc, start, end) {
    let chars = codePoints.get(doc);
    if (chars === undefined) {
      chars = Array.from(doc.text);
      codePoints.set(doc, chars);
    }
    return chars.slice(start, end).join("");
  }

  function original(index) {
    const s = suspects[index];
    return { answer: null, label: s.label, start: s.start, end: s.end };
  }

  function current(index) {
    return entries.get(index) || original(index);
  }

  function isEdited(index, entry) {
    const s = suspects[index];
    return entry.label !== s.label || entry.start !== s.start || entry.end !== s.end;
  }

  // --- storage: compact rows [index, answer code or "", label, start, end] ---

  function state() {
    const rows = [];
    for (const [index, e] of entries) rows.push([index, e.answer ? CODES[e.answer] : "", e.label, e.start, e.end]);
    const steps = history.map((h) => [h.index, h.cursor, h.before ? [h.before.answer ? CODES[h.before.answer] : "", h.before.label, h.before.start, h.before.end] : null]);
    // time: of the last change, so the newer of the server's and the browser's copies is read,
    // and the server refuses a state older than its own
    return { format: FORMAT, cursor: cursor, rows: rows, history: steps, time: lastChange };
  }

  function save() {
    lastChange = Date.now();
    const stored = state();
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(stored));
      storageError = null;
    } catch (err) {
      // a full or disabled storage must not stop the review: say so, and keep going
      storageError = err;
    }
    if (SERVED && timer === null) timer = setTimeout(send, SEND_DELAY);
    markSaved();
  }

  // the state as it is now, one request at a time; a change made while one is
  // on its way schedules the next, a failure retries
  function send() {
    timer = null;
    if (!mayWrite) return;
    if (sending) {
      timer = setTimeout(send, SEND_DELAY);
      return;
    }
    sending = true;
    markSaved();
    inFlight = new Set(dirty);
    dirty.clear();
    put(false)
      .then((response) => {
        if (response.ok) {
          revision = response.headers.get("ETag") || revision;
          inFlight.clear();
          return null;
        }
        if (response.status === 409) return merge();
        return response.json().then((body) => new Error(body.error), () => new Error("HTTP " + response.status));
      })
      .catch((err) => err)
      .then((err) => {
        if (err) for (const index of inFlight) dirty.add(index);
        if (err) inFlight.clear();
        const changed = (err === null) !== (serverError === null);
        serverError = err;
        sending = false;
        if (err && timer === null) timer = setTimeout(send, RETRY_DELAY);
        markSaved();
        if (changed) render(err ? "" : "Decisions saved by the review server again.");
      });
  }

  // for scripts driving the page, and for pagehide: is everything on disk?
  function markSaved() {
    if (SERVED) ui.card.dataset.saved = String(!sending && timer === null && serverError === null);
  }

  // closing the tab within SEND_DELAY of a change: send it on the way out
  function flush() {
    if (!SERVED || !mayWrite || timer === null) return;
    clearTimeout(timer);
    timer = null;
    put(true).catch(() => null);  // the browser's copy still has it
  }

  function put(keepalive) {
    const body = JSON.stringify({ state: state() });
    const headers = { "Content-Type": "application/json", "X-Review-Token": TOKEN, "If-Match": revision || '"0"' };
    return fetch(DECISIONS_URL, { method: "PUT", headers: headers, body: body, keepalive: keepalive });
  }

  // another tab or window saved since this page read the decisions: take theirs for
  // every suspect this page did not change, keep this page's own changes, save again
  function merge() {
    const mine = new Set([...dirty, ...inFlight]);
    inFlight.clear();
    return fetch(DECISIONS_URL, { cache: "no-store", headers: { "X-Review-Token": TOKEN } })
      .then((response) => {
        if (!response.ok && response.status !== 404) throw new Error("HTTP " + response.status);
        revision = response.headers.get("ETag") || revision;
        return response.ok ? response.json() : null;
      })
      .then((stored) => {
        const theirs = new Map();
        for (const row of (stored && stored.rows) || []) {
          const entry = Array.isArray(row) ? validEntry(...row) : null;
          if (entry) theirs.set(row[0], entry);
        }
        for (const index of new Set([...entries.keys(), ...theirs.keys()])) {
          if (!mine.has(index)) applyEntry(index, theirs.get(index));
        }
        for (const index of mine) dirty.add(index);
        save();
        render("Merged with the decisions saved from another tab or window.");
        return null;
      })
      .catch((err) => {
        for (const index of mine) dirty.add(index);
        return new Error("could not merge with the decisions saved from another tab or window (" + err.message + ")");
      });
  }

  function validEntry(index, code, label, start, end) {
    if (!Number.isInteger(index) || index < 0 || index >= total) return null;
    const tokens = data.docs[suspects[index].doc].tokens.length;
    const answer = code === "" ? null : ANSWERS[code];
    if (answer === undefined || !Number.isInteger(label) || label < 0 || label >= labels.length) return null;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > tokens || start >= end) return null;
    return { answer: answer, label: label, start: start, end: end };
  }

  function fromBrowser() {
    try {
      return JSON.parse(localStorage.getItem(STORAGE_KEY) || "null");
    } catch (err) {
      return null;
    }
  }

  // the server's copy is on disk; the browser's may hold the last changes
  // before a reload that the server had not received yet: the newer one wins
  function fromServer() {
    return fetch(DECISIONS_URL, { cache: "no-store", headers: { "X-Review-Token": TOKEN } })
      .then((response) => {
        revision = response.headers.get("ETag") || revision;
        if (response.ok) return response.json();
        if (response.status === 404) return null;  // nothing saved yet
        throw new Error("HTTP " + response.status);
      })
      .then((stored) => {
        mayWrite = true;
        return stored;
      })
      .catch((err) => {
        serverError = new Error("could not read the saved decisions (" + err.message + "); reload the page to try again");
        return null;
      });
  }

  function load(stored) {
    if (!stored || stored.format !== FORMAT) return;
    if (typeof stored.time === "number") lastChange = stored.time;
    for (const row of stored.rows || []) {
      const entry = Array.isArray(row) ? validEntry(...row) : null;
      if (entry) entries.set(row[0], entry);
    }
    for (const step of stored.history || []) {
      if (!Array.isArray(step) || !Number.isInteger(step[0]) || step[0] < 0 || step[0] >= total) continue;
      const before = Array.isArray(step[2]) ? validEntry(step[0], ...step[2]) : undefined;
      if (before === null) continue;  // a step that could not be undone faithfully
      history.push({ index: step[0], cursor: Math.min(Math.max(step[1] | 0, 0), total), before: before });
    }
    if (Number.isInteger(stored.cursor)) cursor = Math.min(Math.max(stored.cursor, 0), total);
    for (const e of entries.values()) if (e.answer) counts[e.answer] += 1;
  }

  // --- changes: every one goes through change(), which keeps undo, counts and storage ---

  function change(index, after, nextCursor, message) {
    const before = entries.get(index);
    history.push({ index: index, before: before, cursor: cursor });
    if (history.length > HISTORY) history.shift();
    setEntry(index, after);
    cursor = nextCursor;
    save();
    render(message);
  }

  function setEntry(index, entry) {
    dirty.add(index);
    applyEntry(index, entry);
  }

  function applyEntry(index, entry) {
    const old = entries.get(index);
    if (old && old.answer) counts[old.answer] -= 1;
    if (entry && entry.answer) counts[entry.answer] += 1;
    // an untouched suspect has no entry: the stored state holds what was done, nothing else
    if (!entry || (!entry.answer && !isEdited(index, entry))) entries.delete(index);
    else entries.set(index, entry);
  }

  function decide(answer) {
    if (cursor >= total) return;
    const entry = Object.assign({}, current(cursor), { answer: answer });
    change(cursor, entry, cursor + 1, PAST[answer] + " " + describe(cursor, entry) + ".");
  }

  function setLabel(label) {
    if (cursor >= total || label < 0 || label >= labels.length) return;
    const entry = current(cursor);
    if (entry.label === label) return;
    change(cursor, Object.assign({}, entry, { label: label }), cursor, "Label " + labels[label] + ".");
  }

  function nextLabel() {
    if (cursor < total) setLabel((current(cursor).label + 1) % labels.length);
  }

  // side "start" or "end", step -1 (left) or +1 (right); a span keeps at least one token
  function canMove(side, step) {
    if (cursor >= total) return false;
    const e = current(cursor);
    const n = data.docs[suspects[cursor].doc].tokens.length;
    if (side === "start") return step < 0 ? e.start > 0 : e.start + 1 < e.end;
    return step < 0 ? e.end - 1 > e.start : e.end < n;
  }

  function move(side, step) {
    if (!canMove(side, step)) return;
    const entry = Object.assign({}, current(cursor));
    entry[side] += step;
    change(cursor, entry, cursor, "Now " + describe(cursor, entry) + ".");
  }

  function undo() {
    const step = history.pop();
    if (!step) {
      render("Nothing to undo.");
      return;
    }
    setEntry(step.index, step.before);
    cursor = step.cursor;
    save();
    render("Undone.");
  }

  function go(index) {
    cursor = Math.min(Math.max(index, 0), total);
    save();
    render("");
  }

  function nextUndecided() {
    for (let k = 1; k <= total; k++) {
      const index = (cursor + k) % total;
      const e = entries.get(index);
      if (!e || !e.answer) return go(index);
    }
    render("Every suspect is decided.");
  }

  // --- drawing: the card only ---

  function spanText(index, entry) {
    const doc = data.docs[suspects[index].doc];
    return cut(doc, doc.tokens[entry.start][0], doc.tokens[entry.end - 1][1]);
  }

  function describe(index, entry) {
    return "\u201c" + spanText(index, entry) + "\u201d as " + labels[entry.label];
  }

  function mark(text, className, label) {
    const node = document.createElement("mark");
    node.className = className;
    node.append(text);
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = label;
    node.append(tag);
    return node;
  }

  // The window of tokens around the suspect, annotated entities and the
  // suspect marked; a few dozen nodes, however long the document.
  function drawContext(index, entry) {
    const doc = data.docs[suspects[index].doc];
    const tokens = doc.tokens;
    const s = suspects[index];
    const from = Math.max(0, Math.min(entry.start, s.start) - CONTEXT);
    const to = Math.min(tokens.length, Math.max(entry.end, s.end) + CONTEXT);
    const owner = new Array(to - from).fill(null);  // per token: the mark it is in
    for (const ent of doc.ents) {
      for (let t = Math.max(ent.start, from); t < Math.min(ent.end, to); t++) owner[t - from] = ent;
    }
    const suspect = { suspect: true, start: entry.start, end: entry.end, label: entry.label };
    for (let t = entry.start; t < entry.end; t++) owner[t - from] = suspect;
    const fragment = document.createDocumentFragment();
    if (from > 0) fragment.append("\u2026 ");
    let t = from;
    while (t < to) {
      const group = owner[t - from];
      let u = t + 1;
      while (u < to && owner[u - from] === group) u++;
      const text = cut(doc, tokens[t][0], tokens[u - 1][1]);
      if (group) {
        const node = mark(text, group.suspect ? "suspect" : "ent", labels[group.label] + (group.suspect ? "?" : ""));
        if (group.suspect) node.setAttribute("aria-label", "suspect: " + text + ", " + labels[group.label]);
        fragment.append(node);
      } else {
        fragment.append(text);
      }
      if (u < to) fragment.append(cut(doc, tokens[u - 1][1], tokens[u][0]));
      t = u;
    }
    if (to < tokens.length) fragment.append(" \u2026");
    ui.context.replaceChildren(fragment);
  }

  function drawPosition(index, entry) {
    const s = suspects[index];
    ui.position.replaceChildren(
      "Suspect " + (index + 1) + " of " + total + " \u00b7 document " + data.docs[s.doc].index +
      " \u00b7 probability " + s.score.toFixed(2),
    );
    if (entry.answer) {
      const badge = document.createElement("span");
      badge.className = "decision " + entry.answer;
      badge.textContent = PAST[entry.answer].toLowerCase();
      ui.position.append(badge);
    }
    ui.edit.textContent = isEdited(index, entry) ? "Changed from " + describe(index, original(index)) + "." : "";
  }

  function drawControls(index, entry) {
    const past = index >= total;
    ui.label.disabled = past;
    if (!past) ui.label.value = String(entry.label);
    ui.startLeft.disabled = !canMove("start", -1);
    ui.startRight.disabled = !canMove("start", 1);
    ui.endLeft.disabled = !canMove("end", -1);
    ui.endRight.disabled = !canMove("end", 1);
    ui.undo.disabled = history.length === 0;
    ui.previous.disabled = index === 0;
    ui.next.disabled = past;
    for (const id of ["review-accept", "review-reject", "review-skip"]) $(id).disabled = past;
  }

  function drawProgress() {
    const decided = counts.accept + counts.reject + counts.ignore;
    ui.progress.max = Math.max(total, 1);
    ui.progress.value = decided;
    ui.counts.textContent = decided + " of " + total + " (" + counts.accept + " accepted, " + counts.reject +
      " rejected, " + counts.ignore + " skipped)";
  }

  function render(message) {
    if (cursor < total) {
      const entry = current(cursor);
      drawPosition(cursor, entry);
      drawContext(cursor, entry);
      drawControls(cursor, entry);
    } else {
      ui.position.textContent = total ? "Past the last suspect" : "No suspects";
      ui.context.textContent = total ? "Export the decisions (Shift+E), go back (K) or on to an undecided suspect (N)." : "";
      ui.edit.textContent = "";
      drawControls(cursor, null);
    }
    drawProgress();
    const problem = SERVED && serverError
      ? "Review server: " + serverError.message + ". Export the decisions (Shift+E) before closing the page."
      : !SERVED && storageError
        ? "Decisions are not being saved in this browser (" + storageError.name + "); export them before closing the page."
        : null;
    ui.status.classList.toggle("warning", problem !== null);
    ui.status.textContent = problem || message;
  }

  // --- export: Prodigy's binary-annotation format, one line per decided suspect ---

  function record(index, entry) {
    const s = suspects[index];
    const doc = data.docs[s.doc];
    const tokens = doc.tokens.map((t, id) => ({ text: cut(doc, t[0], t[1]), start: t[0], end: t[1], id: id, ws: t[2] === 1 }));
    const span = { start: tokens[entry.start].start, end: tokens[entry.end - 1].end, token_start: entry.start, token_end: entry.end - 1, label: labels[entry.label] };
    const meta = { doc: doc.index, score: s.score };
    if (isEdited(index, entry)) {
      meta.original = { start: tokens[s.start].start, end: tokens[s.end - 1].end, label: labels[s.label] };
    }
    return { text: doc.text, tokens: tokens, spans: [span], answer: entry.answer, meta: meta };
  }

  function exportText() {
    const decided = [...entries.keys()].filter((i) => entries.get(i).answer).sort((a, b) => a - b);
    return decided.map((i) => JSON.stringify(record(i, entries.get(i))) + "\n").join("");
  }

  function download() {
    const text = exportText();
    const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = "review-" + data.key + ".jsonl";
    document.body.append(link);
    link.click();
    link.remove();
    // revoked later: revoking at once can cancel the download that click() started
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    const lines = text ? text.split("\n").length - 1 : 0;
    render("Exported " + lines + " decision" + (lines === 1 ? "" : "s") + " to review-" + data.key + ".jsonl.");
  }

  // --- input ---

  const ACTIONS = {
    accept: () => decide("accept"), reject: () => decide("reject"), skip: () => decide("ignore"), undo: undo,
    nextLabel: nextLabel, startLeft: () => move("start", -1), startRight: () => move("start", 1),
    endLeft: () => move("end", -1), endRight: () => move("end", 1),
    next: () => go(cursor + 1), previous: () => go(cursor - 1), nextUndecided: nextUndecided, export: download,
  };

  function actionOf(event) {
    const key = event.key;
    if (key === "ArrowLeft") return event.shiftKey ? "endLeft" : "startLeft";
    if (key === "ArrowRight") return event.shiftKey ? "endRight" : "startRight";
    if (key === "E") return "export";
    if (event.shiftKey) return null;
    const plain = { a: "accept", x: "reject", i: "skip", " ": "skip", u: "undo", Backspace: "undo", l: "nextLabel",
      j: "next", k: "previous", n: "nextUndecided" };
    return plain[key] || null;
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    if (target.closest("select, input, textarea")) {
      // the label list keeps its own keys; Escape gives them back to the review
      if (event.key === "Escape") {
        event.preventDefault();
        ui.card.focus();
      }
      return;
    }
    // Enter and Space keep their meaning on a focused button or link
    if ((event.key === "Enter" || event.key === " ") && target.closest("button, a, summary")) return;
    const digit = /^[1-9]$/.test(event.key) ? Number(event.key) - 1 : -1;
    const action = digit >= 0 ? () => setLabel(digit) : ACTIONS[actionOf(event)];
    if (!action) return;
    event.preventDefault();
    action();
  }

  function bind() {
    const clicks = {
      "review-accept": "accept", "review-reject": "reject", "review-skip": "skip", "review-undo": "undo",
      "review-start-left": "startLeft", "review-start-right": "startRight", "review-end-left": "endLeft",
      "review-end-right": "endRight", "review-previous": "previous", "review-next": "next",
      "review-next-undecided": "nextUndecided", "review-export": "export",
    };
    for (const [id, name] of Object.entries(clicks)) $(id).addEventListener("click", ACTIONS[name]);
    ui.label.addEventListener("change", () => setLabel(Number(ui.label.value)));
    document.addEventListener("keydown", onKey);
    window.addEventListener("pagehide", flush);
  }

  function fillLabels() {
    labels.forEach((label, n) => {
      const option = document.createElement("option");
      option.value = String(n);
      option.textContent = (n < 9 ? n + 1 + ": " : "") + label;
      ui.label.append(option);
    });
  }

  function newer(a, b) {
    if (!a || !b) return a || b;
    return (b.time || 0) > (a.time || 0) ? b : a;
  }

  function start(stored) {
    const chosen = newer(stored, fromBrowser());
    load(chosen);
    // changes the server missed (the page closed within SEND_DELAY of them) go to it now,
    // as this page's own: a merge with a newer save keeps them
    if (SERVED && chosen && chosen !== stored) {
      const theirs = new Map();
      for (const row of (stored && stored.rows) || []) if (Array.isArray(row)) theirs.set(row[0], JSON.stringify(validEntry(...row)));
      for (const index of new Set([...entries.keys(), ...theirs.keys()])) {
        if (JSON.stringify(entries.get(index) || null) !== (theirs.get(index) || "null")) dirty.add(index);
      }
      timer = setTimeout(send, 0);
    }
    fillLabels();
    bind();
    render(total ? "" : "The audit found no suspects.");
    ui.card.focus();
    // for scripts driving the page: served, it draws only once the server has answered
    ui.card.dataset.ready = "true";
    markSaved();
  }

  if (SERVED) fromServer().then(start);
  else start(null);
})();
