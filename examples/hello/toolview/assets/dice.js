// <dice-toolview>: the conversation.toolview of roll_dice. The page sets
// `call` ({id, name, arguments}) when the call starts and `result` (the
// tool_result event's toolResult) when it ends.
const faces = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];

class DiceToolView extends HTMLElement {
  set call(c) { this._call = c; this.render(); }
  set result(r) { this._result = r; this.render(); }
  render() {
    const args = this._call ? JSON.parse(this._call.arguments || "{}") : {};
    let text = `rolling ${args.count ?? "?"} dice…`;
    if (this._result) {
      try {
        const out = JSON.parse(this._result.content);
        text = out.faces.map((f) => faces[f - 1]).join(" ");
      } catch {
        text = this._result.content;
      }
    }
    this.textContent = text;
    this.style.fontSize = "28px";
  }
}
customElements.define("dice-toolview", DiceToolView);
