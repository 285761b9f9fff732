// The preview page: long-polls /api/state for what the current preview user sees and sends
// every click, choice and form to /api/act (the preview signs it and sends it to the bot).
"use strict";
(function () {
  const S = {
    user: new URLSearchParams(location.search).get("user") || localStorage.getItem("user") || "",
    pane: decodeURIComponent(location.hash.slice(1)),
    version: "",
    data: null,
    shown: {},
    live: true,
    poller: null,
    thread: null, // the message the composer replies to: {channel, ts, what}
    notices: new Map(), // a notice shown → its element (each goes away by itself)
  };
  // How long a notice stays (the preview forgets it after as long: a reload shows none).
  const NOTICE_MS = 8000;
  const $ = (id) => document.getElementById(id);
  // This run's token, given with the page: the server answers no request without it.
  const TOKEN = document.querySelector('meta[name="preview-token"]').content;

  async function poll() {
    const controller = new AbortController();
    S.poller = controller;
    while (S.poller === controller) {
      try {
        const query = `user=${encodeURIComponent(S.user)}&since=${encodeURIComponent(S.version)}`;
        const response = await fetch(`/api/state?${query}`, {
          signal: controller.signal,
          headers: { "X-Preview-Token": TOKEN },
        });
        const data = await response.json();
        if (S.poller !== controller) return;
        S.data = data;
        S.version = data.version;
        S.user = data.user;
        if (S.live) apply();
      } catch (error) {
        if (S.poller !== controller) return;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  function restart() {
    if (S.poller) S.poller.abort();
    S.version = "";
    S.shown = {};
    poll();
  }

  function apply() {
    const d = S.data;
    if (!d) return;
    users(d);
    sidebar(d);
    pane(d);
    modal(d);
    notices(d.notices);
    $("time-zone").innerHTML = d.time_zone || "";
    const problem = $("kandev-problem");
    problem.innerHTML = d.kandev || "";
    problem.hidden = !d.kandev;
    document.body.dataset.version = d.version;
  }

  function notices(list) {
    for (const [html, element] of S.notices) {
      if (!list.includes(html) && !element.isConnected) S.notices.delete(html);
    }
    for (const html of list) {
      if (S.notices.has(html)) continue;
      S.notices.set(html, showNotice(html));
    }
  }

  function showNotice(html) {
    const div = document.createElement("div");
    div.className = "notice";
    div.title = "Click to dismiss";
    div.innerHTML = html;
    div.addEventListener("click", () => div.remove());
    $("notices").appendChild(div);
    setTimeout(() => div.remove(), NOTICE_MS);
    return div;
  }

  function users(d) {
    const select = $("user");
    const wanted = d.users.map((u) => u.id).join(",");
    if (select.dataset.ids !== wanted) {
      select.innerHTML = "";
      for (const u of d.users) select.add(new Option(u.name, u.id));
      select.dataset.ids = wanted;
    }
    select.value = d.user;
    const me = d.users.find((u) => u.id === d.user);
    $("role").textContent = me && me.role ? me.role : "";
    localStorage.setItem("user", d.user);
  }

  function sidebar(d) {
    const list = $("channels");
    const html = d.sidebar
      .map((c) => {
        const name = c.direct ? c.name : `# ${c.name}`;
        const current = c.id === S.pane ? ' class="current"' : "";
        const id = escapeText(c.id).replace(/"/g, "&quot;");
        return `<li><a href="#${id}" data-pane="${id}"${current}>${escapeText(name)}</a></li>`;
      })
      .join("");
    if (list.innerHTML !== html) list.innerHTML = html;
    $("home-link").className = S.pane === "home" ? "current" : "";
  }

  function pane(d) {
    if (!(S.pane in d.panes)) S.pane = d.sidebar.length ? d.sidebar[0].id : "home";
    const html = d.panes[S.pane];
    if (S.shown.pane !== S.pane || S.shown.html !== html) {
      $("pane").innerHTML = html;
      S.shown.pane = S.pane;
      S.shown.html = html;
    }
    $("composer").hidden = S.pane === "home";
  }

  function modal(d) {
    const overlay = $("overlay");
    const slot = $("modal-slot");
    if (!d.modal) {
      overlay.hidden = true;
      slot.innerHTML = "";
      S.shown.modal = "";
      return;
    }
    if (S.shown.modal === d.modal) return;
    const before = slot.querySelector("form.modal");
    const kept = before ? fieldValues(before) : {};
    const sameView = before && d.modal.includes(`data-view-id="${before.dataset.viewId}"`);
    slot.innerHTML = d.modal;
    if (sameView) restoreValues(slot.querySelector("form.modal"), kept);
    S.shown.modal = d.modal;
    overlay.hidden = false;
  }

  function escapeText(text) {
    const span = document.createElement("span");
    span.textContent = text;
    return span.innerHTML;
  }

  // -- form values ------------------------------------------------------------------------
  function fieldValues(form) {
    const values = {};
    for (const field of form.querySelectorAll("[name]")) {
      const name = field.name;
      if (field.type === "checkbox") {
        if (!(name in values)) values[name] = [];
        if (field.checked) values[name].push(field.value);
      } else if (field.type === "radio") {
        if (!(name in values)) values[name] = null;
        if (field.checked) values[name] = field.value;
      } else {
        values[name] = field.value === "" ? null : field.value;
      }
    }
    return values;
  }

  function restoreValues(form, values) {
    if (!form) return;
    for (const field of form.querySelectorAll("[name]")) {
      if (!(field.name in values)) continue;
      const value = values[field.name];
      if (field.type === "checkbox") field.checked = (value || []).includes(field.value);
      else if (field.type === "radio") field.checked = value === field.value;
      else if (value !== null) field.value = value;
    }
  }

  // -- acting -----------------------------------------------------------------------------
  async function act(request, busy) {
    if (busy) busy.classList.add("busy");
    try {
      const response = await fetch("/api/act", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Preview-Token": TOKEN },
        body: JSON.stringify(Object.assign({ user: S.user }, request)),
      });
      const result = await response.json();
      if (!response.ok) flash(result.error || `HTTP ${response.status}`);
      return result;
    } catch (error) {
      flash(`The preview did not answer: ${error}`);
      return null;
    } finally {
      if (busy) busy.classList.remove("busy");
    }
  }

  function flash(text) {
    showNotice(escapeText(text));
  }

  function replyTo(message) {
    if (!message) {
      S.thread = null;
      $("replying").hidden = true;
      $("say").placeholder = "Message, or /kandev-questions …";
      return;
    }
    const author = message.querySelector(".author");
    S.thread = { channel: message.dataset.channel, ts: message.dataset.ts };
    $("replying-to").textContent = author ? author.textContent.replace(/APP$/, "").trim() : "";
    $("replying").hidden = false;
    $("say").placeholder = "Reply in the thread…";
    $("say").focus();
  }

  function where(element) {
    const surface = element.closest("[data-surface]");
    if (!surface) return null;
    return {
      surface: surface.dataset.surface,
      channel: surface.dataset.channel || "",
      ts: surface.dataset.ts || "",
      version: surface.dataset.version || "",
      view_id: surface.dataset.viewId || "",
    };
  }

  function confirmFirst(json) {
    const dialog = JSON.parse(json);
    return new Promise((resolve) => {
      $("confirm-title").innerHTML = dialog.title;
      $("confirm-text").innerHTML = dialog.text;
      $("confirm-yes").innerHTML = dialog.confirm;
      $("confirm-deny").innerHTML = dialog.deny;
      $("confirm").hidden = false;
      const done = (answer) => {
        $("confirm").hidden = true;
        $("confirm-yes").onclick = null;
        $("confirm-deny").onclick = null;
        resolve(answer);
      };
      $("confirm-yes").onclick = () => done(true);
      $("confirm-deny").onclick = () => done(false);
    });
  }

  document.addEventListener("click", async (event) => {
    const link = event.target.closest("[data-pane]");
    if (link) {
      event.preventDefault();
      S.pane = link.dataset.pane;
      replyTo(null);
      history.replaceState(null, "", `#${S.pane}`);
      apply();
      if (S.pane === "home") act({ kind: "home" });
      return;
    }
    if (event.target.closest("#stop-replying")) {
      replyTo(null);
      return;
    }
    const target = event.target.closest("[data-act]");
    if (!target || target.tagName === "SELECT" || target.tagName === "INPUT") return;
    const place = where(target);
    if (!place) return;
    const kind = target.dataset.act;
    if (kind === "reply") {
      replyTo(target.closest(".message[data-surface=message]"));
      return;
    }
    if (kind === "shortcut") {
      target.closest("details").open = false;
      act(Object.assign(place, { kind, callback_id: target.dataset.callbackId }), target);
    } else if (kind === "close") {
      act({ kind, view_id: place.view_id }, target);
    } else if (kind === "click") {
      if (target.tagName !== "A") event.preventDefault();
      if (target.dataset.confirm && !(await confirmFirst(target.dataset.confirm))) return;
      const ids = { action_id: target.dataset.actionId, block_id: target.dataset.blockId };
      act(Object.assign(place, ids, { kind, value: target.dataset.value }), target);
    }
  });

  document.addEventListener("change", (event) => {
    const target = event.target;
    if (target.id === "user") {
      S.user = target.value;
      restart();
      return;
    }
    if (target.id === "live") {
      S.live = target.checked;
      if (S.live) apply();
      return;
    }
    if (target.dataset.act === "pick") {
      // a form's input with dispatch_action: Slack tells the app at once (the form stays)
      const place = where(target);
      if (!place) return;
      const ids = { action_id: target.dataset.actionId, block_id: target.dataset.blockId };
      act(Object.assign(place, ids, { kind: "pick", option: target.value }), target);
      return;
    }
    if (target.dataset.act !== "select") return;
    const place = where(target);
    if (!place) return;
    let option = target.value;
    if (target.type === "checkbox") {
      const block = target.closest(".block");
      const boxes = block.querySelectorAll(`input[name="${CSS.escape(target.name)}"]:checked`);
      option = Array.from(boxes, (box) => box.value);
    }
    const ids = { action_id: target.dataset.actionId, block_id: target.dataset.blockId };
    act(Object.assign(place, ids, { kind: "select", option }), target);
  });

  document.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    if (form.id === "composer") {
      const text = $("say").value.trim();
      if (!text) return;
      const channel = S.pane === "home" ? "" : S.pane;
      if (S.thread && S.thread.channel === channel && !text.startsWith("/")) {
        act({ kind: "reply", channel, thread_ts: S.thread.ts, text });
      } else {
        act({ kind: text.startsWith("/") ? "slash" : "say", channel, text });
      }
      $("say").value = "";
      return;
    }
    if (form.classList.contains("modal")) {
      act({ kind: "submit", view_id: form.dataset.viewId, values: fieldValues(form) }, form);
    }
  });

  window.addEventListener("hashchange", () => {
    S.pane = decodeURIComponent(location.hash.slice(1));
    apply();
  });

  poll();
})();
