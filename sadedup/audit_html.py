"""The audit report as one self-contained HTML page: inline CSS, plots drawn with matplotlib
and inlined as SVG, no script and no reference to anything outside the page (no font, image or style is
fetched), so it opens the same offline, in a mail attachment or in a review tool.

Every piece of corpus text (and every file name) is escaped; control characters and the
Unicode controls that reorder text on screen are shown as visible marks, so a document
cannot change how the page reads. The plots are drawn from the numbers of sadedup.audit,
so the page and `--format json` always agree.
"""
from __future__ import annotations

import difflib
import html
import json
import math
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

# ---- colours (one palette for the page and the plots)
INK, MUTED, GRID, PAPER = "#1f2937", "#6b7280", "#e5e7eb", "#ffffff"
BLUE, GREEN, RED, ORANGE, PURPLE, TEAL, GOLD = "#2563eb", "#15803d", "#dc2626", "#ea580c", "#7c3aed", "#0d9488", "#ca8a04"
REASON_COLOURS = {"exact_duplicate": PURPLE, "near_duplicate": ORANGE, "substring_coverage": RED}
EXTRA_COLOURS = (TEAL, GOLD, BLUE, "#be185d", "#4d7c0f")

_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def esc(value: Any) -> str:
    """Text for HTML: escaped, control characters as U+FFFD, bidi controls as visible marks."""
    s = _CTRL.sub("\ufffd", str(value))
    s = _BIDI.sub(lambda m: f"\u27e8U+{ord(m.group()):04X}\u27e9", s)
    return html.escape(s, quote=True)


def num(n: Any) -> str:
    if n is None:
        return "\u2014"
    if isinstance(n, float) and not n.is_integer():
        return f"{n:,.3g}" if abs(n) < 1000 else f"{n:,.0f}"
    return f"{int(n):,}"


def pct(part: float, whole: float, digits: int = 1) -> str:
    if not whole:
        return "\u2014"
    return f"{100.0 * part / whole:.{digits}f}%"


def size(b: Any) -> str:
    if b is None:
        return "\u2014"
    b = float(b)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(b) < 1000 or unit == "TB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1000
    return f"{b:.1f} TB"


def secs(s: Any) -> str:
    if s is None:
        return "\u2014"
    s = float(s)
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    return f"{s / 60:.1f} min"


def reason_colour(reason: str, i: int = 0) -> str:
    return REASON_COLOURS.get(reason, EXTRA_COLOURS[i % len(EXTRA_COLOURS)])


# ---- plots ---------------------------------------------------------------------------------
#
# Drawn with matplotlib (no pyplot, so no global backend or figure state: each figure gets its
# own Agg canvas and is saved as SVG into a string that goes inline into the page). The SVG is
# made to be the same bytes for the same numbers (a fixed hash salt for its ids, no date) and to
# refer to nothing outside the page: text stays text in a system font stack, the XML prolog and
# its DOCTYPE URL and the metadata block (with matplotlib's address) are left out, and its ids
# are prefixed per figure so several plots on one page never share one.

FONT = ["DejaVu Sans", "Bitstream Vera Sans", "Arial", "Helvetica", "sans-serif"]
RC = {"svg.fonttype": "none", "text.parse_math": False, "font.family": "sans-serif", "font.sans-serif": FONT,
      "font.size": 11, "axes.edgecolor": MUTED, "axes.labelcolor": INK, "axes.labelsize": 12,
      "xtick.color": MUTED,
      "ytick.color": MUTED, "xtick.labelsize": 11, "ytick.labelsize": 11, "xtick.major.size": 4,
      "ytick.major.size": 0, "lines.scale_dashes": False, "legend.fontsize": 10.5, "legend.frameon": True,
      "legend.framealpha": 0.88, "legend.edgecolor": GRID, "legend.fancybox": True, "legend.borderpad": 0.5,
      "legend.labelcolor": MUTED, "legend.handlelength": 1.6, "figure.facecolor": PAPER,
      "axes.facecolor": PAPER}

_SVG_TAG = re.compile(r"^<svg\b[^>]*>")
_ID = re.compile(r' id="([^"]+)"')
_IDREF_USE = re.compile(r'(?:href="#|url\(#)([^")]+)')
_IDREF_USE_SUB = re.compile(r'(href="#|url\(#)([^")]+)')


def _tick_label(v: float) -> str:
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def _dashes(dash: str | None) -> Any:
    return "-" if not dash else (0, tuple(float(x) for x in dash.split()))


def _svg(fig: Any, title: str) -> str:
    """The figure as an inline <svg> element (see the note above)."""
    import io

    import matplotlib

    salt = f"{zlib.crc32(title.encode()):08x}"
    buf = io.StringIO()
    with matplotlib.rc_context({**RC, "svg.hashsalt": f"sadedup-{salt}"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    s = buf.getvalue()
    s = s[s.index("<svg"):]  # no XML prolog, no DOCTYPE (with its DTD address)
    s = re.sub(r"<metadata>.*?</metadata>", "", s, flags=re.S)
    s = re.sub(r"<style[^>]*>.*?</style>", "", s, count=1, flags=re.S)  # the page's CSS has its rule (svg.plot *)
    used = set(_IDREF_USE.findall(s))  # ids something refers to (clip paths, markers); the others go
    s = _ID.sub(lambda m: f' id="f{salt}-{m.group(1)}"' if m.group(1) in used else "", s)
    s = _IDREF_USE_SUB.sub(lambda m: f"{m.group(1)}f{salt}-{m.group(2)}", s)
    view = re.search(r'viewBox="([^"]+)"', s).group(1)
    s = _SVG_TAG.sub(f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                     f'class="plot" viewBox="{view}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>',
                     s, count=1)
    s = re.sub(r">\s+<", "><", s)
    return re.sub(r"\s*\n\s*", " ", s).strip()


def _figure(width: float, height: float) -> Any:
    """A figure `width` x `height` page pixels (72 dpi: one pixel a point), on its own Agg
    canvas: no pyplot, so no display, no global backend and no figure registry."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width / 72, height / 72), dpi=72)
        FigureCanvasAgg(fig)
    return fig


def _ticks(axis: Any, log: bool, nbins: int, fmt: Callable[[float], str]) -> None:
    """An axis's ticks: decades on a log scale (no minor ticks), else a few round values;
    labels by `fmt`."""
    from matplotlib import ticker

    if log:
        axis.set_major_locator(ticker.LogLocator(base=10, numticks=12))
        axis.set_minor_locator(ticker.NullLocator())
    else:
        axis.set_major_locator(ticker.MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: fmt(v)))


class Plot:
    """A chart drawn with matplotlib: linear or log axes, lines, points, error bars, bars,
    reference lines and a legend where it covers the least data (loc="best"). Sizes are in
    pixels of the page (one SVG unit each); lines and bars are clipped to the axes, points and
    error bars are not (one on the edge shows whole)."""

    def __init__(self, title: str, xlabel: str, ylabel: str, x: tuple[float, float], y: tuple[float, float],
                 width: int = 560, height: int = 320, xlog: bool = False, ylog: bool = False,
                 xticks: Sequence[tuple[float, str]] | None = None, yfmt: Callable[[float], str] = _tick_label,
                 xfmt: Callable[[float], str] = _tick_label) -> None:
        import matplotlib

        self.title, self.w, self.h = title, width, height
        self.legend = False
        with matplotlib.rc_context(RC):
            self.fig = _figure(width, height)
            ml, mr, mt, mb = 66, 18, 34, 48
            self.fig.subplots_adjust(left=ml / width, right=1 - mr / width, top=1 - mt / height, bottom=mb / height)
            ax = self.ax = self.fig.add_subplot()
            self.fig.text(ml / width, 1 - 20 / height, title, fontsize=13, fontweight="bold", color=INK,
                          va="baseline")  # not ax.set_title: placing that measures every tick label again
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            for side in ("top", "right", "left"):
                ax.spines[side].set_visible(False)
            ax.spines["bottom"].set_color(MUTED)
            if xlog:
                ax.set_xscale("log")
            if ylog:
                ax.set_yscale("log")
            ax.set_xlim(*x)
            ax.set_ylim(*y)
            ax.grid(axis="y", color=GRID, linewidth=1)
            ax.set_axisbelow(True)
            ax.tick_params(axis="y", length=0, pad=6)
            ax.tick_params(axis="x", which="minor", length=0)
            _ticks(ax.yaxis, ylog, 5, yfmt)
            if xticks is not None:
                ax.set_xticks([v for v, _ in xticks], [lab for _, lab in xticks])
            else:
                _ticks(ax.xaxis, xlog, 6, xfmt)
        self.max_bar = 64.0  # a few wide bins: bars of a readable width

    def _label(self, label: str | None) -> str:
        if label:
            self.legend = True
            return label
        return "_nolegend_"

    def line(self, xs: Sequence[float], ys: Sequence[float], colour: str = BLUE, width: float = 2,
             dash: str | None = None, label: str | None = None) -> "Plot":
        self.ax.plot(list(xs), list(ys), color=colour, linewidth=width, linestyle=_dashes(dash),
                     solid_joinstyle="round", label=self._label(label), zorder=2)
        return self

    def points(self, xs: Sequence[float], ys: Sequence[float], colour: str = BLUE, r: float = 3.2,
               label: str | None = None, opacity: float = 1.0, hollow: bool = False) -> "Plot":
        from matplotlib.colors import to_rgba

        face = "none" if hollow else to_rgba(colour, opacity)
        self.ax.plot(list(xs), list(ys), linestyle="none", marker="o", markersize=2 * r, markerfacecolor=face,
                     markeredgecolor=colour, markeredgewidth=1.2, label=self._label(label), zorder=3, clip_on=False)
        return self

    def errorbars(self, xs: Sequence[float], lo: Sequence[float], hi: Sequence[float], colour: str = BLUE) -> "Plot":
        if len(xs):
            mid = [(a + b) / 2 for a, b in zip(lo, hi)]
            self.ax.errorbar(list(xs), mid, yerr=[[m - a for m, a in zip(mid, lo)], [b - m for m, b in zip(mid, hi)]],
                             fmt="none", ecolor=colour, elinewidth=1.4, capsize=4, capthick=1.4, zorder=3,
                             clip_on=False)
        return self

    def bars(self, xs: Sequence[float], ys: Sequence[float], colour: str = BLUE, width: float = 0.8,
             label: str | None = None, labels: bool = False) -> "Plot":
        """Bars centred on xs, `width` in x units (at most `max_bar` pixels wide)."""
        x0, x1 = self.ax.get_xlim()
        axes_px = self.ax.get_position().width * self.w
        if self.ax.get_xscale() != "log":
            width = min(width, self.max_bar * (x1 - x0) / axes_px)
        keep = [(a, b) for a, b in zip(xs, ys) if b > 0 or self.ax.get_yscale() != "log"]
        bars = self.ax.bar([a for a, _ in keep], [b for _, b in keep], width=width, color=colour,
                           label=self._label(label), zorder=2)
        if labels:
            self.ax.bar_label(bars, labels=[num(b) for _, b in keep], padding=3, color=MUTED, fontsize=10.5,
                              clip_on=False)
        return self

    def vline(self, x: float, colour: str = MUTED, label: str | None = None, dash: str = "4 3") -> "Plot":
        self.ax.axvline(x, color=colour, linewidth=1.3, linestyle=_dashes(dash), label=self._label(label), zorder=2)
        return self

    def hline(self, y: float, colour: str = MUTED, label: str | None = None, dash: str = "4 3") -> "Plot":
        self.ax.axhline(y, color=colour, linewidth=1.3, linestyle=_dashes(dash), label=self._label(label), zorder=2)
        return self

    def svg(self) -> str:
        import matplotlib

        with matplotlib.rc_context(RC):
            if self.legend:
                self.ax.legend(loc="best")
        return _svg(self.fig, self.title)


def hbars(title: str, rows: list[tuple[str, float, str, str]], total: float, width: int = 560) -> str:
    """Horizontal bars, one a row: (label, value, colour, note); lengths relative to `total`."""
    import matplotlib

    lw, rh, note_room = 150, 26, 130
    h = 30 + rh * len(rows)
    with matplotlib.rc_context(RC):
        fig = _figure(width, h)
        fig.subplots_adjust(left=lw / width, right=1, top=1 - 28 / h, bottom=2 / h)
        ax = fig.add_subplot()
        fig.text(4 / width, 1 - 18 / h, title, fontsize=13, fontweight="bold", color=INK, va="baseline")
        span = width - lw - note_room
        ax.set_xlim(0, (total or 1) * (width - lw) / span)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_axis_off()
        for i, (label, value, colour, note) in enumerate(rows):
            bw = 0 if not total else max(value, (total or 1) / span)  # at least a pixel
            ax.barh(i, bw, height=(rh - 8) / rh, color=colour, zorder=2)
            ax.text(-(total or 1) * 8 / span, i, label, ha="right", va="center", color=MUTED, fontsize=11)
            ax.text(bw + (total or 1) * 6 / span, i, note, ha="left", va="center", color=MUTED, fontsize=11)
        return _svg(fig, title)


# ---- page pieces ---------------------------------------------------------------------------

def table(head: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None,
          cls: str = "") -> str:
    """A table; cells are escaped unless given as `Raw`."""
    numeric = numeric or [False] * len(head)
    th = "".join(f'<th class="{"n" if n else ""}">{esc(h)}</th>' for h, n in zip(head, numeric))
    body = []
    for r in rows:
        tds = "".join(f'<td class="{"n" if n else ""}">{c if isinstance(c, Raw) else esc(c)}</td>'
                      for c, n in zip(r, numeric))
        body.append(f"<tr>{tds}</tr>")
    return f'<div class="tw"><table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


class Raw(str):
    """HTML made here, not to be escaped again."""


def facts(items: Sequence[tuple[str, str, str]]) -> str:
    """Key figures as cards: (label, value, note)."""
    cards = "".join(f'<div class="card"><div class="cl">{esc(l)}</div><div class="cv{" cs" if len(v) > 11 else ""}">{esc(v)}</div>'
                    f'<div class="cn">{esc(n)}</div></div>' for l, v, n in items)
    return f'<div class="cards">{cards}</div>'


def section(id_: str, title: str, body: str, lead: str = "") -> str:
    lead_html = f'<p class="lead">{lead}</p>' if lead else ""
    return f'<section id="{esc(id_)}"><h2>{esc(title)}</h2>{lead_html}{body}</section>'


def clip_text(t: dict[str, Any] | None) -> str:
    if t is None:
        return '<span class="muted">(no text)</span>'
    if not t["text"]:
        return '<span class="muted">(empty)</span>'
    if not t["text"].strip():
        return f'<span class="muted">(whitespace only: {num(len(t["text"]))} characters)</span>'
    return esc(t["text"])


def in_context(c: dict[str, Any] | None, cls: str) -> str:
    if c is None:
        return '<span class="muted">(not in this work folder)</span>'
    before = ("\u2026" if c["cut_before"] else "") + c["before"]
    after = c["after"] + ("\u2026" if c["cut_after"] else "")
    mark = esc(c["text"]) if c["text"] else "\u2205"
    return f'<span class="ctx">{esc(before)}</span><mark class="{cls}">{mark}</mark><span class="ctx">{esc(after)}</span>'


def word_diff(a: str, b: str) -> tuple[str, str]:
    """Both texts escaped, with the words that differ between them marked."""
    ta, tb = re.split(r"(\s+)", a), re.split(r"(\s+)", b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    oa, ob = [], []
    for op, i0, i1, j0, j1 in sm.get_opcodes():
        pa, pb = esc("".join(ta[i0:i1])), esc("".join(tb[j0:j1]))
        if op == "equal":
            oa.append(pa)
            ob.append(pb)
        else:
            if pa.strip():
                oa.append(f'<mark class="da">{pa}</mark>')
            else:
                oa.append(pa)
            if pb.strip():
                ob.append(f'<mark class="db">{pb}</mark>')
            else:
                ob.append(pb)
    return "".join(oa), "".join(ob)


# ---- sections ------------------------------------------------------------------------------

def _summary(d: dict[str, Any]) -> str:
    docs, chars, mh = d["documents"], d["chars"], d.get("minhash")
    dropped = sum(docs["dropped"].values())
    cards = [("Documents in", num(docs["input"]), f"{num(docs['input_errors'])} input row(s) set aside"),
             ("Kept", num(docs["kept"]), f"{pct(docs['kept'], docs['input'])} of input; {num(docs['cut'])} cut"),
             ("Dropped", num(dropped), ", ".join(f"{num(n)} {r.replace('_', ' ')}" for r, n in docs["dropped"].items())
              or "none"),
             ("Characters out", num(chars["output"]),
              f"of {num(chars['input'])} in: {pct(chars['removed'], chars['input'])} removed")]
    if mh:
        cards.append(("Candidate pairs", num(mh["candidate_pairs"]),
                      f"{mh['candidate_pair_share']:.4%} of all {num(mh['all_pairs'])} pairs"))
        cards.append(("Banding", f"{mh['bands']} \u00d7 {mh['rows']}",
                      f"{mh['num_perm']} permutations, threshold {mh['threshold']:g} ({mh['verify']})"))
    if d.get("tokens"):
        t = d["tokens"]
        cards.append(("Tokens out", num(t["output"]), f"of {num(t['input'])} {t['tokenizer']} tokens: "
                                                      f"{pct(t['removed'], t['input'])} removed"))
    stages = d["stages"]
    rows = [("input", docs["input"], BLUE, f"{num(docs['input'])}")]
    crow = [("input", chars["input"], BLUE, f"{num(chars['input'])}")]
    for i, s in enumerate(stages):
        colour = reason_colour(s["reason"] or "", i)
        rows.append((f"after {s['method']}", s["documents_out"], colour,
                     f"{num(s['documents_out'])} (\u2212{num(s['dropped'])})"))
        crow.append((f"after {s['method']}", s["chars_out"], colour,
                     f"{num(s['chars_out'])} ({pct(s['chars_out'], chars['input'])})"))
    plots = (f'<div class="grid2"><figure>{hbars("Documents through the stages", rows, docs["input"])}</figure>'
             f'<figure>{hbars("Characters through the stages", crow, chars["input"])}</figure></div>')
    return section("summary", "Summary", _unfinished(d) + facts(cards) + plots)


def _unfinished(d: dict[str, Any]) -> str:
    """The warning a report of a folder mid-way opens with: its numbers are not the run's."""
    left = d.get("unfinished") or []
    if not left:
        return ""
    items = "; ".join(f"{s['stage']} ({s['state']}: {s['why']})" for s in left)
    return (f'<p class="warn">This work folder is not finished: the numbers below are those of the stages done '
            f'so far, not of the workflow. Not done: {esc(items)}.</p>')


def _stages(d: dict[str, Any]) -> str:
    rows = []
    for s in d["stages"]:
        rows.append([s["method"], s["reason"] or "\u2014", num(s["documents_in"]), num(s["dropped"]),
                     num(s["documents_out"]), num(s["chars_in"]), num(s["chars_dropped"]), num(s["chars_cut"]),
                     num(s["chars_out"]), pct(s["chars_in"] - s["chars_out"], s["chars_in"]), secs(s["seconds"])])
    c = d["chars"]
    body = table(["stage", "drop reason", "docs in", "dropped", "docs out", "chars in", "chars of dropped",
                  "chars cut", "chars out", "removed", "time"], rows,
                 [False, False] + [True] * 9)
    body += (f'<p class="note">Characters are code points of the original text. A document dropped by a stage '
             f'loses all of its characters there; a span stage also cuts passages out of the documents it passes on. '
             f'The output holds {num(c["output"])} characters: {num(c["input"])} in, minus {num(c["dropped_documents"])} '
             f'in dropped documents, minus {num(c["cut_from_kept"])} cut from kept ones (the union of every span '
             f'stage\'s spans).</p>')
    t = d.get("tokens")
    if t:
        body += (f'<p class="note">Tokens ({esc(t["tokenizer"])}, the substring stage\'s view of the '
                 f'{num(t["documents"])} documents it tokenized): {num(t["input"])} in, {num(t["removed"])} removed, '
                 f'{num(t["output"])} out.</p>')
    return section("stages", "Rows and characters per stage", body)


def _cluster_sizes_plot(method: str, sizes: list[list[int]]) -> str:
    if not sizes:
        return ""
    if len(sizes) <= 14:
        xs = list(range(len(sizes)))
        labels = [str(s) for s, _ in sizes]
        counts = [n for _, n in sizes]
    else:  # power-of-two bins of size
        bins: dict[int, int] = {}
        for s, n in sizes:
            k = max(1, math.ceil(math.log2(s)))
            bins[k] = bins.get(k, 0) + n
        keys = sorted(bins)
        xs = list(range(len(keys)))
        labels = [f"{2 ** (k - 1) + 1}\u2013{2 ** k}" if k > 1 else "2" for k in keys]
        counts = [bins[k] for k in keys]
    top = max(counts)
    p = Plot(f"{method}: clusters by size", "documents in the cluster", "clusters (log scale)", (-0.6, len(xs) - 0.4),
             (0.8, top * 2.2), ylog=True, xticks=list(zip(xs, labels)))
    p.bars(xs, counts, reason_colour("exact_duplicate" if method == "exact" else "near_duplicate"), labels=True)
    return f"<figure>{p.svg()}</figure>"


def _clusters_section(d: dict[str, Any]) -> str:
    parts = []
    for method, c in d["clusters"].items():
        if method == "minhash":
            continue
        parts.append(f"<h3>{esc(method)} clusters</h3>")
        parts.append(facts([("Clusters", num(c["clusters"]), f"{num(c['members'])} documents in them"),
                            ("Dropped", num(c["dropped"]), "all but the kept one of each")]))
        parts.append(f'<div class="grid2">{_cluster_sizes_plot(method, c["sizes"])}</div>' + _largest_table(c["largest"]))
    return "".join(parts)


def _largest_table(largest: list[dict[str, Any]]) -> str:
    if not largest:
        return ""
    sims = any(c["mean_similarity"] is not None for c in largest)  # exact clusters have none
    rows = [[num(c["cluster_id"]), num(c["size"]), num(c["kept_doc_id"])]
            + ([("\u2014" if c["mean_similarity"] is None else
                 f"{c['mean_similarity']:.3f} / {c['min_similarity']:.3f}")] if sims else [])
            + [Raw(f'<div class="snip">{clip_text(c["kept"])}</div>')] for c in largest]
    head = ["cluster", "size", "kept doc"] + (["similarity to kept, mean / min"] if sims else []) + ["kept text"]
    return "<h4>Largest clusters</h4>" + table(head, rows, [True, True, True] + ([True] if sims else []) + [False],
                                                  "wide")


def _minhash_section(d: dict[str, Any]) -> str:
    m = d.get("minhash")
    if not m:
        return ""
    parts = [facts([
        ("Configuration", m["config"] or "", f"{m['ngram']}-gram {m['shingle']} shingles, keep {m['keep']}"),
        ("Candidate pairs", num(m["candidate_pairs"]),
         f"{m['candidate_pair_share']:.4%} of the {num(m['all_pairs'])} pairs of {num(m['documents'])} documents"),
        ("Verified", num(m["verified_pairs"]), f"similarity \u2265 {m['threshold']:g} ({m['verify']})"),
        ("Clusters", num(m["clusters"]), f"{num(m['dropped'])} documents dropped; drift floor {m['drift_floor']}"),
        ("S-curve knee", f"{m['knee']:.3f}", f"(1/b)^(1/r) for {m['bands']} bands \u00d7 {m['rows']} rows"),
        ("No shingle", num(m["no_shingle"]), f"documents shorter than {m['ngram']} words: never near duplicates"),
    ])]
    if m.get("stale"):
        parts.append(f'<p class="warn">{esc(m["stale"])}: measured points and the sweep are left out.</p>')
        return section("minhash", "Near duplicates (MinHash-LSH)", "".join(parts))
    meas = m["measured"]
    curve = Plot("S-curve: P(candidate pair | Jaccard)", "Jaccard similarity", "P(candidate)", (0, 1), (0, 1.02),
                 yfmt=lambda v: f"{v:g}", xfmt=lambda v: f"{v:g}")
    curve.line([j for j, _ in m["s_curve"]], [p for _, p in m["s_curve"]], BLUE, label=f"theory 1-(1-J^{m['rows']})^{m['bands']}")
    curve.vline(m["threshold"], RED, label=f"threshold {m['threshold']:g}")
    curve.vline(m["knee"], MUTED, label=f"knee {m['knee']:.2f}", dash="2 3")
    b = meas["bins"]
    if b:
        curve.errorbars([x["mean_jaccard"] for x in b], [x["s_curve_low"] for x in b], [x["s_curve_high"] for x in b],
                        ORANGE)
        curve.points([x["mean_jaccard"] for x in b], [x["s_curve_measured"] for x in b], ORANGE,
                     label="measured agreement put through the curve")
    scatter = Plot("Signature agreement vs exact Jaccard (sample)", "exact Jaccard of the shingle sets",
                   "signature agreement", (0, 1), (0, 1.02), yfmt=lambda v: f"{v:g}", xfmt=lambda v: f"{v:g}")
    scatter.line([0, 1], [0, 1], GRID, width=1.5, label="agreement = Jaccard")
    pts = meas["points"]
    if pts:
        scatter.points([p[2] for p in pts], [p[3] for p in pts], BLUE, r=2.4, opacity=0.35, label="candidate pair")
    if b:
        scatter.errorbars([x["mean_jaccard"] for x in b], [x["agreement_low"] for x in b],
                          [x["agreement_high"] for x in b], ORANGE)
        scatter.points([x["mean_jaccard"] for x in b], [x["agreement"] for x in b], ORANGE, r=3.6,
                       label="bin mean, 95% interval")
    scatter.vline(m["threshold"], RED).hline(m["threshold"], RED)
    parts.append(f'<div class="grid2"><figure>{curve.svg()}<figcaption>The orange points put each Jaccard bin\'s '
                 f'measured per-row agreement rate through the banding formula (95% Wilson intervals): where they '
                 f'sit on the line, the signatures behave as the theory says. Candidate pairs are chosen by their '
                 f'signatures, so in the low bins, where few pairs become candidates, the sampled ones agree more '
                 f'than their Jaccard (selection), and the points sit above the line.</figcaption></figure>'
                 f'<figure>{scatter.svg()}<figcaption>{num(meas["pairs"])} of {num(meas.get("of", 0))} candidate pairs '
                 f'drawn with seed {meas.get("seed", 0)}; upper left of the red cross: verified but truly below the '
                 f'threshold, lower right: truly above but not verified.</figcaption></figure></div>')
    if b:
        rows = [[f"{x['jaccard_from']:.1f}\u2013{x['jaccard_to']:.1f}", num(x["pairs"]), f"{x['mean_jaccard']:.3f}",
                 f"{x['agreement']:.3f} [{x['agreement_low']:.3f}, {x['agreement_high']:.3f}]",
                 f"{x['s_curve_theory']:.3f}", f"{x['s_curve_measured']:.3f} [{x['s_curve_low']:.3f}, "
                                                f"{x['s_curve_high']:.3f}]"] for x in b]
        at = meas["at_threshold"]

        def ci(v, lo, hi):
            return "\u2014" if v is None else f"{v:.3f} [{lo:.3f}, {hi:.3f}]"

        parts.append('<h4>Measured points</h4>' + table(
            ["Jaccard bin", "pairs", "mean Jaccard", "agreement [95%]", "S(J) theory", "S(agreement) [95%]"], rows,
            [False, True, True, True, True, True]) + "<h4>The verification on the sample</h4>" + table(
            ["", "value"], [
                ["pairs verified (as the run decided)", num(at["verified"])],
                ["truly \u2265 threshold among them (precision)", ci(at["precision"], at["precision_low"], at["precision_high"])],
                ["verified among pairs truly \u2265 threshold (recall)", ci(at["recall"], at["recall_low"], at["recall_high"])],
                ["false positives / false negatives", f"{num(at['false_positive'])} / {num(at['false_negative'])}"],
                ["RMS error of agreement (expected \u221a(J(1\u2212J)/k))",
                 f"{meas['rms_error']:.4f} ({meas['expected_rms_error']:.4f})"],
                ["mean error (bias)", f"{meas['mean_error']:+.4f}"],
            ], [False, True], "kv") + '<p class="note">Recall here is among candidate pairs: pairs the bands never '
            'brought together are not in the sample (the S-curve says how many there are).</p>')
    sweep = m.get("sweep") or []
    if sweep:
        n = sweep[0]["documents"] or 1
        p = Plot("Documents kept at other thresholds", "minhash.threshold", "documents the stage keeps",
                 (min(s["value"] for s in sweep) - 0.02, max(s["value"] for s in sweep) + 0.02),
                 (min(s["kept"] for s in sweep) * 0.98, n * 1.005), xfmt=lambda v: f"{v:g}")
        p.line([s["value"] for s in sweep], [s["kept"] for s in sweep], GREEN, label="kept")
        p.points([s["value"] for s in sweep], [s["kept"] for s in sweep], GREEN)
        p.vline(m["threshold"], RED, label=f"as run ({m['threshold']:g})")
        rows = [[("\u25b6 " if s["value"] == m["threshold"] else "") + f"{s['value']:g}", num(s["kept"]),
                 num(s["dropped"]), pct(s["dropped"], s["documents"]), num(s["removed_chars"]), num(s["clusters"]),
                 num(s["verified_pairs"])] for s in sweep]
        parts.append('<h3>What other thresholds would drop</h3><div class="grid2"><figure>' + p.svg() +
                     '<figcaption>From the stored candidate pairs and their similarities: exactly what the stage '
                     'decides at each threshold (later stages not rerun).</figcaption></figure></div>' + table(
                         ["threshold", "kept", "dropped", "dropped %", "chars of dropped", "clusters", "verified pairs"],
                         rows, [False] + [True] * 6))
    c = d["clusters"].get("minhash")
    if c:
        parts.append('<h3>Clusters</h3><div class="grid2">' + _cluster_sizes_plot("minhash", c["sizes"]) + "</div>"
                     + _largest_table(c["largest"]))
    hot = m.get("hotspots") or []
    if hot:
        rows = [[num(h["documents"]), num(h["pairs"]), ", ".join(map(str, h["bands"][:6]))
                 + ("\u2026" if len(h["bands"]) > 6 else ""), num(h["dropped_as_near_duplicate"]),
                 Raw(f'<div class="snip">{clip_text(h["first"])}</div>')] for h in hot]
        parts.append("<h4>Largest LSH buckets (hotspots)</h4>" + table(
            ["documents", "candidate pairs made", "band(s)", "of them dropped", "first document's text"], rows,
            [True, True, False, True, False], "wide"))
    return section("minhash", "Near duplicates (MinHash-LSH)", "".join(parts))


def _length_label(k: int) -> str:
    if k == 0:
        return "0"
    lo, hi = 1 << (k - 1), (1 << k) - 1
    return _tick_label(lo) if lo == hi else f"{_tick_label(lo)}\u2013{_tick_label(hi + 1)}"


def _spans_section(d: dict[str, Any], method: str, s: dict[str, Any], i: int) -> str:
    colour = reason_colour(s["reason"] or "", i)
    cut_docs = s["documents"]
    parts = [facts([("Spans", num(s["spans"]), f"in {num(cut_docs)} documents"),
                    ("Characters cut", num(s["covered_chars"]), f"{num(s['span_chars'])} summed over spans"),
                    ("Dropped", num(s["dropped"]), f"over the drop rule ({s['reason'] or 'no reason'})")])]
    figs = []
    cov = s["coverage_bins"]
    if cov:
        from .audit import COVERAGE_BINS

        xs = [b / COVERAGE_BINS + 0.5 / COVERAGE_BINS for b, _ in cov]
        p = Plot(f"{method}: share of each document cut", "characters cut / characters of the document",
                 "documents", (0, 1), (0, max(n for _, n in cov) * 1.15), xfmt=lambda v: f"{v:.0%}")
        p.bars(xs, [n for _, n in cov], colour, width=0.9 / COVERAGE_BINS)
        drop = (d["datasheet"].get("workflow") or {}).get("substring", {}).get("drop_fraction") if method == "substring" else None
        if drop:
            p.vline(drop, RED, label=f"drop_fraction {drop:g}")
        figs.append(f"<figure>{p.svg()}<figcaption>Documents with at least one {esc(method)} span.</figcaption></figure>")
    lb = s["length_bins"]
    if lb:
        xs = list(range(len(lb)))
        p = Plot(f"{method}: span lengths", "characters (power-of-two bins)", "spans", (-0.6, len(lb) - 0.4),
                 (0, max(n for _, n in lb) * 1.15), xticks=[(x, _length_label(b)) for x, (b, _) in zip(xs, lb)])
        p.bars(xs, [n for _, n in lb], colour, labels=True)
        figs.append(f"<figure>{p.svg()}</figure>")
    if figs:
        parts.append(f'<div class="grid2">{"".join(figs)}</div>')
    top = s["top_passages"]
    if top:
        rows = []
        for t in top:
            where = (f"eval {t['eval_item']['eval_file']} row {t['eval_item']['eval_row']}" if t.get("eval_item")
                     else f"doc {t['source']['doc_id']} chars {t['source']['start']}\u2013{t['source']['end']}")
            rows.append([num(t["count"]), num(t["documents"]), where, ", ".join(map(str, t["examples"])),
                         Raw(f'<div class="snip">{clip_text(t["source"])}</div>')])
        parts.append("<h4>Most repeated passages</h4>" + table(
            ["spans", "documents", "first seen", "cut from (doc ids)", "text"], rows,
            [True, True, False, False, False], "wide"))
    if s["by_source"]:
        parts.append("<h4>Per source</h4>" + table(
            ["source", "spans", "documents", "characters"],
            [[x["source"], num(x["spans"]), num(x["documents"]), num(x["chars"])] for x in s["by_source"]],
            [False, True, True, True]))
    return section(f"spans-{method}", f"Spans: {method}", "".join(parts))


def _sources_section(d: dict[str, Any]) -> str:
    reasons = sorted({r for x in d["by_source"] for r in x["dropped"]})
    rows = [[x["source"], num(x["documents"]), num(x["kept"])] + [num(x["dropped"].get(r, 0)) for r in reasons]
            + [num(x["chars_in"]), num(x["chars_out"]), pct(x["chars_in"] - x["chars_out"], x["chars_in"])]
            for x in d["by_source"]]
    return section("sources", "Per source", table(["source", "documents", "kept", *[r.replace("_", " ") for r in reasons],
                                                  "chars in", "chars out", "removed"], rows,
                                                 [False] + [True] * (len(reasons) + 5)))


def _decontamination_section(d: dict[str, Any]) -> str:
    dc = d.get("decontamination")
    if not dc:
        return ""
    verdicts = ["contaminated", "partial", "clean"]
    rows = [[e["eval_file"], num(e["items"])] + [num(e["verdicts"].get(v, 0)) for v in verdicts]
            + [pct(e["verdicts"].get("contaminated", 0), e["items"]),
               "\u2014" if e.get("mean_overlap") is None else f"{e['mean_overlap']:.3f}", num(e["matched_docs"])]
            for e in dc["eval_sets"]]
    body = table(["eval set", "items", *verdicts, "contaminated %", "mean overlap", "matched documents"], rows,
                 [False] + [True] * 7)
    if dc["most_contaminated"]:
        body += "<h4>Most contaminated items</h4>" + table(
            ["eval set", "row", "field", "overlap", "n-grams matched", "verdict", "documents"],
            [[x["eval_file"], num(x["eval_row"]), x["field"], "\u2014" if x["overlap"] is None else f"{x['overlap']:.3f}",
              f"{num(x['n_matched'])} / {num(x['n_ngrams'])}", x["verdict"], num(x["matched_docs"])]
             for x in dc["most_contaminated"]], [False, True, False, True, True, False, True])
    return section("decontamination", "Decontamination verdicts", body)


def _review_section(d: dict[str, Any]) -> str:
    smp = d["sample"]
    parts = []
    for method, picked in smp["clusters"].items():
        if not picked:
            continue
        parts.append(f"<h3>{esc(method)} clusters</h3>")
        for c in picked:
            parts.append(f'<div class="pair"><div class="ph">cluster {num(c["cluster_id"])} \u00b7 {num(c["size"])} '
                         f'documents \u00b7 kept by rule {esc(c["keep_rule"])}</div>')
            same = [m for m in c["dropped"] if m["text"] == c["kept"]["text"] and m["chars"] == c["kept"]["chars"]]
            if same and len(same) == len(c["dropped"]):  # exact copies: the text once, and who they are
                ids = ", ".join(num(m["doc_id"]) for m in same) + (" and more" if c["size"] - 1 > len(same) else "")
                parts.append(f'<div class="two"><div class="side kept"><div class="sh">kept \u00b7 doc '
                             f'{num(c["kept"]["doc_id"])} \u00b7 {num(c["kept"]["chars"])} chars</div>'
                             f'<div class="tx">{clip_text(c["kept"])}</div></div><div class="side drop"><div class="sh">'
                             f'dropped \u00b7 doc(s) {ids}</div><div class="tx muted">the same text</div></div></div>'
                             f'</div>')
                continue
            for m in c["dropped"]:
                if not c["kept"]["text"].strip() or not m["text"].strip():
                    a, b = clip_text(c["kept"]), clip_text(m)
                else:
                    a, b = word_diff(c["kept"]["text"], m["text"])
                sim = "" if m.get("similarity") is None else f" \u00b7 similarity {m['similarity']:.3f}"
                parts.append(f'<div class="two"><div class="side kept"><div class="sh">kept \u00b7 doc '
                             f'{num(c["kept"]["doc_id"])} \u00b7 {num(c["kept"]["chars"])} chars</div>'
                             f'<div class="tx">{a}</div></div><div class="side drop"><div class="sh">dropped \u00b7 doc '
                             f'{num(m["doc_id"])} \u00b7 {num(m["chars"])} chars{sim}</div><div class="tx">{b}</div>'
                             f'</div></div>')
            parts.append("</div>")
    for method, picked in smp["spans"].items():
        if not picked:
            continue
        parts.append(f"<h3>{esc(method)} spans</h3>")
        for s in picked:
            rm = s["removed"]
            if s.get("eval_item"):
                e = s["eval_item"]
                right_head = f"matches eval item \u00b7 {esc(e['eval_file'])} row {num(e['eval_row'])} \u00b7 {esc(e['field'])}"
                right = '<span class="muted">(eval texts are not stored in the work folder)</span>'
            elif s["source"] is not None:
                src = s["source"]
                right_head = f"earlier text \u00b7 doc {num(src['doc_id'])} \u00b7 chars {num(src['start'])}\u2013{num(src['end'])}"
                right = in_context(src, "src")
            else:
                right_head, right = "source", in_context(None, "src")
            sim = "" if s.get("similarity") is None else f" \u00b7 similarity {s['similarity']:.3f}"
            parts.append(f'<div class="pair"><div class="ph">span {num(s["span_id"])}{sim}</div><div class="two">'
                         f'<div class="side drop"><div class="sh">removed \u00b7 doc {num(rm["doc_id"])} \u00b7 chars '
                         f'{num(rm["start"])}\u2013{num(rm["end"])}</div><div class="tx">{in_context(rm, "cut")}</div></div>'
                         f'<div class="side kept"><div class="sh">{right_head}</div><div class="tx">{right}</div></div>'
                         f'</div></div>')
    if not parts:
        parts.append('<p class="muted">Nothing was clustered or cut: there is nothing to review.</p>')
    lead = (f"A random sample (seed {smp['seed']}, up to {smp['per_method']} per method; the same seed draws the same "
            f"sample) for reading by hand: kept beside dropped with the differing words marked, and each removed "
            f"passage in its place beside the text it duplicated.")
    return section("review", "Review sample", "".join(parts), esc(lead))


def _sweep_section(d: dict[str, Any]) -> str:
    sw = d.get("sweep")
    if not sw:
        return ""
    parts = []
    for setting, label in (("minhash_threshold", "minhash.threshold"), ("min_length", "substring.min_length")):
        rows = sw.get(setting) or []
        if not rows:
            continue
        run_value = sw["as_run"].get(setting)
        xs = [r["value"] for r in rows]
        lo, hi = min(xs + ([run_value] if run_value is not None else [])), max(xs + ([run_value] if run_value else []))
        pad = (hi - lo) * 0.06 or (abs(hi) * 0.1 or 1)
        n = rows[0]["documents"] or 1
        p = Plot(f"{label}: characters removed", label, "characters removed", (lo - pad, hi + pad),
                 (0, max(r["removed_chars"] for r in rows) * 1.15 or 1), xfmt=lambda v: f"{v:g}")
        p.line(xs, [r["removed_chars"] for r in rows], RED, label="characters removed")
        p.points(xs, [r["removed_chars"] for r in rows], RED)
        if run_value is not None:
            p.vline(run_value, MUTED, label=f"as run ({run_value:g})")
        q = Plot(f"{label}: documents", label, "documents", (lo - pad, hi + pad), (0, n * 1.05),
                 xfmt=lambda v: f"{v:g}")
        q.line(xs, [r["kept"] for r in rows], GREEN, label="kept").points(xs, [r["kept"] for r in rows], GREEN)
        q.line(xs, [r["dropped"] for r in rows], ORANGE, label="dropped").points(xs, [r["dropped"] for r in rows], ORANGE)
        extra = ["cut", "spans"] if setting == "min_length" else ["clusters"]
        trows = [[f"{r['value']:g}", num(r["documents"]), num(r["kept"]), num(r["dropped"]), num(r["removed_chars"]),
                  *[num(r.get(k)) for k in extra]] for r in rows]
        parts.append(f"<h3>{esc(label)}</h3><div class=\"grid2\"><figure>{p.svg()}</figure><figure>{q.svg()}</figure>"
                     f"</div>" + table(["value", "documents", "kept", "dropped", "chars removed", *extra], trows,
                                       [True] * (5 + len(extra))))
    for u in sw.get("unanswered") or []:
        vals = ", ".join(f"{v:g}" for v in u["values"])
        parts.append(f'<p class="warn">{esc(u["setting"])} {esc(vals)}: not answered: {esc(u["why"])}</p>')
    return section("sweep", "Sweep: other settings", "".join(parts),
                   "Each value is what the stage would decide with that one setting changed, computed from the "
                   "stored artifacts (signatures, candidate pairs, suffix arrays), without rerunning the stage.")


def _resources_section(d: dict[str, Any]) -> str:
    r = d["resources"]
    rows = [[s["stage"], s["status"], secs(s["seconds"]), size(s["disk_bytes"]),
             size(s["peak_memory_bytes"]) if s["peak_memory_bytes"] else "not recorded", s["finished_at"] or ""]
            for s in r["stages"]]
    timed = [s for s in r["stages"] if s["seconds"]]
    plot = ""
    if timed:
        total = max(s["seconds"] for s in timed)
        plot = hbars("Time per stage", [(s["stage"], s["seconds"], BLUE, secs(s["seconds"])) for s in timed], total)
    body = (table(["stage", "status", "time", "disk", "peak memory", "finished (UTC)"], rows,
                  [False, False, True, True, True, False]) + f'<div class="grid2"><figure>{plot}</figure></div>'
            f'<p class="note">Disk: {size(r["disk_bytes"])} in the work folder, {size(r["database_bytes"])} of it the '
            f'database. Memory budget {size(r["memory_budget_bytes"])} for {num(r["workers"])} worker(s)'
            + ("" if r["peak_memory_recorded"] else "; the stages of this run did not record their peak memory")
            + ".</p>")
    return section("resources", "Time, memory and disk", body)


def _when(ns: Any) -> str:
    """A file's modification time (ns since the epoch) as UTC, to the second."""
    import datetime as dt

    if not isinstance(ns, int):
        return "\u2014"
    return dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _datasheet_section(d: dict[str, Any]) -> str:
    ds = d["datasheet"]
    run = ds.get("run") or {}
    wf = ds.get("workflow") or {}
    rows = [["work folder", ds["workdir"]], ["sadedup (this report)", ds["sadedup_version"]],
            ["sadedup (last run)", run.get("version") or "\u2014"],
            ["last run", f"#{run.get('run_id')} {run.get('command')}: {run.get('status')}, {run.get('started_at')} \u2192 "
                         f"{run.get('finished_at')}" if run else "\u2014"],
            ["runs recorded", num(ds["runs"])], ["output", ds.get("output") or "\u2014"],
            ["stages", " \u2192 ".join(wf.get("stages") or [])]]
    if run.get("tokenizer"):
        rows.append(["trained tokenizer", run["tokenizer"]])
    for k, v in sorted((ds.get("resolved") or {}).items()):
        rows.append([f"resolved {k}", str(v)])
    manifest = table(["input", "bytes", "modified (UTC)"],
                     [[i.get("path"), num(i.get("size")), _when(i.get("mtime_ns"))] for i in ds["inputs"]],
                     [False, True, False])
    sources = table(["source file", "documents", "characters", "input errors"],
                    [[s["source"], num(s["documents"]), num(s["chars"]), num(s["input_errors"])] for s in ds["sources"]],
                    [False, True, True, True])
    config = json.dumps(wf, indent=2, sort_keys=True, ensure_ascii=False)
    body = (table(["", ""], rows, [False, False], "kv") + "<h4>Input manifest</h4>" + manifest + "<h4>Files read</h4>"
            + sources + f'<details><summary>Whole configuration (the resolved workflow)</summary><pre>{esc(config)}'
            f'</pre></details>')
    return section("datasheet", "Datasheet", body)


CSS = f"""
*{{box-sizing:border-box}}
html{{-webkit-text-size-adjust:100%}}
body{{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:{INK};
background:#f6f7f9}}
header{{background:{INK};color:#fff;padding:22px 32px 18px}}
header h1{{margin:0;font-size:22px;font-weight:650;letter-spacing:-.01em}}
header .sub{{margin:6px 0 0;color:#cbd5e1;font-size:13px}}
nav{{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid {GRID};padding:8px 32px;
display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px}}
nav a{{color:{BLUE};text-decoration:none}} nav a:hover{{text-decoration:underline}}
main{{max-width:1240px;margin:0 auto;padding:8px 32px 48px}}
section{{scroll-margin-top:44px;background:#fff;border:1px solid {GRID};border-radius:8px;padding:18px 22px;margin:18px 0}}
h2{{margin:0 0 10px;font-size:18px;font-weight:650}} h3{{margin:20px 0 8px;font-size:15px}}
h4{{margin:14px 0 6px;font-size:13px;color:{MUTED};text-transform:uppercase;letter-spacing:.04em}}
.lead{{color:{MUTED};margin:0 0 12px}} .note{{color:{MUTED};font-size:12.5px}} .muted{{color:{MUTED}}}
.warn{{background:#fff7ed;border:1px solid #fed7aa;color:#9a3412;padding:8px 12px;border-radius:6px}}
.cards{{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:10px;margin:6px 0 14px}}
.card{{border:1px solid {GRID};border-radius:8px;padding:10px 12px;background:#fbfbfc}}
.cl{{font-size:11.5px;color:{MUTED};text-transform:uppercase;letter-spacing:.05em}}
.cv{{font-size:22px;font-weight:650;font-variant-numeric:tabular-nums;margin:2px 0}}
.cv.cs{{font-size:15px;word-break:break-all;padding:4px 0}} .cn{{font-size:12px;color:{MUTED}}}
.grid2{{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px 28px;align-items:start}}
table.kv{{width:auto;min-width:50%}}
figure{{margin:0}} figcaption{{font-size:12px;color:{MUTED};margin-top:2px}}
svg.plot{{width:100%;height:auto;display:block}} svg.plot *{{stroke-linejoin:round;stroke-linecap:butt}}
.tw{{overflow-x:auto}}
table{{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}}
th{{text-align:left;font-weight:600;color:{MUTED};border-bottom:1px solid {GRID};padding:6px 8px;white-space:nowrap}}
td{{border-bottom:1px solid #f0f1f3;padding:6px 8px;vertical-align:top}}
td.n,th.n{{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}}
table.wide td:last-child{{width:55%}}
.snip{{white-space:pre-wrap;word-break:break-word;font-size:12.5px;max-height:7.5em;overflow:hidden}}
.pair{{border:1px solid {GRID};border-radius:8px;margin:10px 0;overflow:hidden}}
.ph{{background:#f3f4f6;padding:6px 12px;font-size:12.5px;color:{MUTED};font-weight:600}}
.two{{display:grid;grid-template-columns:1fr 1fr}} .two+.two{{border-top:1px solid {GRID}}}
.side{{padding:8px 12px;min-width:0}} .side+.side{{border-left:1px solid {GRID}}}
.sh{{font-size:12px;font-weight:600;margin-bottom:4px}} .kept .sh{{color:{GREEN}}} .drop .sh{{color:{RED}}}
.tx{{white-space:pre-wrap;word-break:break-word;font-size:12.5px;line-height:1.45;max-height:22em;overflow:auto}}
.ctx{{color:{MUTED}}}
mark{{border-radius:2px;padding:0 1px;color:inherit}} mark.cut{{background:#fee2e2}} mark.src{{background:#dcfce7}}
mark.da{{background:#dcfce7}} mark.db{{background:#fee2e2}}
details{{margin-top:10px}} summary{{cursor:pointer;color:{BLUE}}}
pre{{background:#f8fafc;border:1px solid {GRID};border-radius:6px;padding:10px;overflow:auto;font-size:12px}}
footer{{color:{MUTED};font-size:12px;text-align:center;padding:0 0 28px}}
@media (max-width:900px){{.grid2{{grid-template-columns:1fr}}}}
@media (max-width:720px){{main{{padding:8px 12px}} .two{{grid-template-columns:1fr}} .side+.side{{border-left:0;
border-top:1px solid {GRID}}} .grid2{{grid-template-columns:1fr}}}}
@media print{{nav{{display:none}} body{{background:#fff}} section{{break-inside:avoid-page;border:0}}}}
"""


def render(d: dict[str, Any]) -> str:
    """The whole page for the numbers of sadedup.audit."""
    ds = d["datasheet"]
    run = ds.get("run") or {}
    cl = _clusters_section(d)
    sections = [_summary(d), _stages(d), _minhash_section(d),
                section("clusters", "Exact duplicates and other clusters", cl) if cl else ""]
    for i, (method, s) in enumerate(d["spans"].items()):
        sections.append(_spans_section(d, method, s, i))
    sections += [_sweep_section(d), _decontamination_section(d), _review_section(d), _sources_section(d),
                 _resources_section(d), _datasheet_section(d)]
    sections = [s for s in sections if s]
    names = {"summary": "Summary", "stages": "Stages", "minhash": "MinHash", "clusters": "Clusters",
             "sweep": "Sweep", "sources": "Sources", "decontamination": "Decontamination", "review": "Review sample",
             "resources": "Resources", "datasheet": "Datasheet"}
    links = []
    for s in sections:
        sid = re.match(r'<section id="([^"]+)"', s).group(1)
        label = names.get(sid, sid.replace("spans-", "Spans: "))
        links.append(f'<a href="#{sid}">{esc(label)}</a>')
    stages = " \u2192 ".join((ds.get("workflow") or {}).get("stages") or [])
    title = f"sadedup audit: {ds['workdir'].rstrip('/').rsplit('/', 1)[-1]}"
    sub = (f"{esc(ds['workdir'])} \u00b7 {esc(stages)} \u00b7 run #{esc(run.get('run_id'))} finished "
           f"{esc(run.get('finished_at'))} \u00b7 sadedup {esc(run.get('version') or ds['sadedup_version'])}"
           if run else esc(ds["workdir"]))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            f'img-src data:">'
            f'<title>{esc(title)}</title><style>{CSS}</style></head><body>'
            f'<header><h1>{esc(title)}</h1><p class="sub">{sub}</p></header><nav>{"".join(links)}</nav>'
            f'<main>{"".join(sections)}</main><footer>Made by sadedup report from the work folder\'s database and '
            f'artifacts; every number here is also in <code>sadedup report --format json</code>.</footer></body></html>\n')
