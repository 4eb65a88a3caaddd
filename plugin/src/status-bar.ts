// The plugin's items in Obsidian's status bar: how many rows break a rule (a
// click opens the Problems view), and the bridge's state while it is on.

import { type Plugin, setIcon } from "obsidian";
import type { Bridge } from "./bridge";
import { bridgeStatus } from "./bridge-settings";
import { NOT_CHECKED, type Problems, statusText } from "./problems";

/** The rows that break a rule, in the status bar while there are any. */
export function showProblems(plugin: Plugin, problems: Problems, open: () => void): void {
	const bar = plugin.addStatusBarItem();
	bar.addClass("datanotes-status", "mod-clickable");
	bar.setAttribute("aria-label", "Open the rows that break a rule");
	bar.hide();
	const icon = bar.createSpan({ cls: "datanotes-status-icon" });
	setIcon(icon, "alert-triangle");
	const label = bar.createSpan();
	bar.addEventListener("click", open);
	plugin.register(
		problems.onChange(() => {
			// An error (metastore.yaml unreadable): the Problems view says why.
			const text = problems.error === null ? statusText(problems.count()) : NOT_CHECKED;
			label.setText(text);
			if (text) bar.show();
			else bar.hide();
		}),
	);
}

/** The bridge's state in the status bar, while it is on. */
export function showBridge(plugin: Plugin, bridge: Bridge | null): void {
	if (bridge) plugin.register(bridgeStatus(plugin.addStatusBarItem(), bridge));
}
