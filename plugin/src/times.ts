// Times as a person reads them in the history panel (issue 53): "5 minutes
// ago", "yesterday", "3 days ago", then the date; the full date and time on
// hover (a title). The panel keeps them true as time passes (refreshTimes),
// against the clock it is given, so that tests can hold it still.

import { formatTime } from "./display";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Whole calendar days (this machine's) from `then` to `now`. */
function daysBetween(then: Date, now: Date): number {
	const midnight = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
	return Math.round((midnight(now) - midnight(then)) / (24 * HOUR));
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? "" : "s"} ago`;

/** An ISO time relative to `now` (ms): "just now", "5 minutes ago", "2 hours
 * ago" (the same day), "yesterday", "3 days ago" (within the week), else its
 * date ("2 Dec", with the year when it is not this year's). "" for none or
 * the epoch (formatTime's rule); the text itself when it is not a time. A
 * time ahead of the clock (another device's) is its date and time. */
export function relativeTime(iso: string | undefined, now: number): string {
	if (!iso) return "";
	const then = new Date(iso);
	if (Number.isNaN(then.getTime())) return iso;
	if (then.getTime() === 0) return "";
	const ago = now - then.getTime();
	if (ago < -MINUTE) return formatTime(iso);
	if (ago < MINUTE) return "just now";
	if (ago < HOUR) return plural(Math.floor(ago / MINUTE), "minute");
	const days = daysBetween(then, new Date(now));
	if (days === 0) return plural(Math.floor(ago / HOUR), "hour");
	if (days === 1) return "yesterday";
	if (days < 7) return `${days} days ago`;
	const sameYear = then.getFullYear() === new Date(now).getFullYear();
	return then.toLocaleDateString(undefined, sameYear ? { day: "numeric", month: "short" } : { day: "numeric", month: "short", year: "numeric" });
}

/** A time in `el`: relative, the full date and time as its title. */
export function drawTime(el: HTMLElement, iso: string, now: number): HTMLElement {
	const span = el.createSpan({ text: relativeTime(iso, now), cls: "datanotes-time" });
	span.dataset.time = iso;
	span.setAttribute("title", formatTime(iso));
	return span;
}

/** A part of an entry's meta line: words, or a time. */
export type MetaPart = string | { time: string | undefined };

/** An entry's meta line: its parts joined by " · ", empty ones left out. */
export function drawMeta(el: HTMLElement, parts: MetaPart[], now: number): HTMLElement {
	const line = el.createDiv({ cls: "datanotes-history-meta" });
	const kept = parts.filter((p) => (typeof p === "string" ? p !== "" : relativeTime(p.time, now) !== ""));
	kept.forEach((p, i) => {
		if (i > 0) line.appendText(" · ");
		if (typeof p === "string") line.appendText(p);
		else drawTime(line, p.time as string, now);
	});
	return line;
}

/** Says each time drawn under `root` again, as of `now`. */
export function refreshTimes(root: HTMLElement, now: number): void {
	for (const span of Array.from(root.querySelectorAll<HTMLElement>(".datanotes-time"))) {
		const text = relativeTime(span.dataset.time, now);
		if (span.textContent !== text) span.setText(text);
	}
}
