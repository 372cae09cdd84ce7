// The settings page: one card per plugin row, generated from the plugin's
// JSON Schema (or a settings.plugin.item slot component instead).
export async function renderSettings({ api, el }) {
  const box = document.getElementById("settings-cards");
  box.replaceChildren(el("p", "muted", "Settings are not available in this build."));
}
