// One bidirectional session (docs/protocol.md) over the browser's WebSocket, binary audio
// frames: each audio.chunk event is followed by one binary frame with its bytes.

export class ServerError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.retryAfter = error.retry_after;
  }
}

export class DemoSession {
  // handlers: onEvent(event), onAudio(chunkEvent, ArrayBuffer), onClose(code, reason)
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.created = null;
    this.closed = false;
    this.pendingChunk = null;
  }

  // Resolves with session.created, rejects with the server's error (or the close).
  open(options) {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      socket.binaryType = "arraybuffer";
      this.socket = socket;
      let settled = false;
      const settle = (fn, value) => { if (!settled) { settled = true; fn(value); } };
      socket.onopen = () => socket.send(JSON.stringify({ type: "open", audio_frames: "binary", ...options }));
      socket.onmessage = (message) => {
        if (typeof message.data !== "string") {
          const chunk = this.pendingChunk;
          this.pendingChunk = null;
          if (chunk) this.handlers.onAudio(chunk, message.data);
          return;
        }
        const event = JSON.parse(message.data);
        if (event.type === "session.created") {
          this.created = event;
          settle(resolve, event);
        } else if (event.type === "error" && !this.created) {
          settle(reject, new ServerError(event.error));
        }
        if (event.type === "audio.chunk") this.pendingChunk = event;
        this.handlers.onEvent(event);
      };
      socket.onclose = (close) => {
        this.closed = true;
        settle(reject, new ServerError({ code: "connection_closed", message: `connection closed (${close.code} ${close.reason})`.trim() }));
        this.handlers.onClose(close.code, close.reason);
      };
    });
  }

  get usable() {
    return this.created !== null && !this.closed;
  }

  send(event) {
    this.socket.send(JSON.stringify(event));
  }

  create(responseId, text, options) {
    this.send({ type: "response.create", response_id: responseId, text, with_timestamps: true, ...options });
  }

  cancel(responseId) {
    this.send({ type: "response.cancel", response_id: responseId });
  }

  // Ends the session: the server finishes queued work (cancel it first to drop it), says
  // session.closed and closes the socket.
  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.socket.readyState === WebSocket.OPEN) this.send({ type: "close" });
  }
}
