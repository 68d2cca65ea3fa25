// Plays pcm_f32 chunks back to back through Web Audio and fires cues (word highlights) at
// the audio clock's time, so highlights follow what is heard, not what has arrived.

const LEAD_S = 0.05; // scheduling headroom for the first chunk after silence

export class PcmPlayer {
  constructor(sampleRate) {
    this.context = new AudioContext({ sampleRate, latencyHint: "interactive" });
    this.sampleRate = sampleRate;
    this.next = 0;
    this.sources = new Set();
    this.cues = [];
    this.timer = setInterval(() => this.tick(), 20);
  }

  async resume() {
    if (this.context.state !== "running") await this.context.resume();
  }

  get playing() {
    return this.sources.size;
  }

  get now() {
    return this.context.currentTime;
  }

  // Schedules one chunk right after the previous one; returns its start on the audio clock.
  schedule(samples) {
    const buffer = this.context.createBuffer(1, samples.length, this.sampleRate);
    buffer.copyToChannel(samples, 0);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const start = Math.max(this.next, this.context.currentTime + LEAD_S);
    source.start(start);
    this.next = start + buffer.duration;
    this.sources.add(source);
    source.onended = () => this.sources.delete(source);
    return start;
  }

  cue(at, action) {
    this.cues.push({ at, action });
    this.cues.sort((a, b) => a.at - b.at);
  }

  tick() {
    const now = this.context.currentTime;
    while (this.cues.length && this.cues[0].at <= now) this.cues.shift().action();
  }

  // Silence now: everything scheduled stops, pending cues are dropped.
  stop() {
    for (const source of this.sources) {
      source.onended = null;
      source.stop();
    }
    this.sources.clear();
    this.cues = [];
    this.next = 0;
  }
}
