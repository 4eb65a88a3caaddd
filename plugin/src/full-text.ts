// In a narrow pane (a sidebar) the panel's paths and headings end in "…"
// (styles.css) rather than push the buttons past its edge; each keeps its
// whole text in a `title`, which shows when the pointer rests on it.

/** What styles.css cuts short with an ellipsis. */
export const CUT_SHORT = [".datanotes-diff-path", ".datanotes-section-note > h6", ".datanotes-problem-table > h6"].join(", ");

/** Gives each element cut short under `root` its whole text as a title: those
 * there now, and those drawn later. Returns the function that stops it. */
export function fullTextTitles(root: HTMLElement): () => void {
	const title = (el: Element): void => {
		if (el.instanceOf(HTMLElement) && el.matches(CUT_SHORT) && !el.hasAttribute("title")) el.setAttribute("title", el.textContent ?? "");
	};
	const within = (node: Node): void => {
		if (!node.instanceOf(HTMLElement)) return;
		title(node);
		node.querySelectorAll(CUT_SHORT).forEach(title);
	};
	within(root);
	if (typeof MutationObserver === "undefined") return () => undefined;
	const observer = new MutationObserver((records) => {
		for (const r of records) r.addedNodes.forEach(within);
	});
	observer.observe(root, { childList: true, subtree: true });
	return () => observer.disconnect();
}
