//! The three renderings of a [`ReadOutput`] (spec 003 §4.9): markdown (default,
//! the most token-efficient for a model), JSON (`ultragit-read/v1`, compact unless
//! verbose) and pretty (plain text for people).
//!
//! Markdown rules (compact: what an agent acts on first): a `# Context for …`
//! header with the query and the unit the anchor resolved to (saying so when
//! it was resolved through the notes, not the outline); then the
//! [decisions](ultragit_schema::ReadOutput::decisions) — `## Constraints`,
//! `## Risks`, `## Depends on`, one bullet per item, deduplicated, with the
//! commits that record it (a constraint the writer inferred says so); then
//! `## Annotated changes, best first`, one bullet per region: commit, date,
//! confidence, today's lines (and the file and unit when the read covers
//! more than one unit) and the intent, with its flags and corrections, later
//! unannotated changes (`**Changed since** …`) and reasoning (`Why:`) on
//! indented lines below — its items are not repeated; then `## Dependencies
//! on this` and `## Cross-cutting concerns`; a stats footer (with the
//! retired items withheld, when any); the trimming notice last. Verbose
//! output adds each region's confidence factors, kind, signature, tags and
//! related annotations. Note text is folded onto one line where it could
//! otherwise open a heading or a list.
//!
//! Pretty (for people) keeps one block per region with all its fields, and
//! lists the decisions whose regions are not shown. Markdown and pretty share
//! the footer (dependencies, concerns, counters, trimming), the scope lines
//! and the related annotations, written once; a `Style` supplies the marks
//! (backticks, headings, bullets, words) that differ.
//!
//! A region's date is its commit's date ([`ScoredRegion::date`]); scores are
//! printed with 3 decimals, as the JSON has them.
//!
//! Part of the published API for these rules; the functions are re-exported
//! at the crate root.

use std::fmt::Write as _;

use ultragit_schema::{
    CrossCuttingEntry, Decision, DependencyEntry, ReadOutput, ResolvedRelated, ScopeEcho,
    ScoredRegion,
};

use crate::query::Format;

/// `output` in `format`.
pub fn render(output: &ReadOutput, format: Format, verbose: bool) -> String {
    match format {
        Format::Markdown => format_markdown(output, verbose),
        Format::Json => format_json(output, verbose),
        Format::Pretty => format_pretty(output, verbose),
    }
}

/// The token estimate of spec 003 §4.8: rendered bytes / 4, rounded up.
pub fn estimate_tokens(output: &ReadOutput, format: Format, verbose: bool) -> u32 {
    let bytes = render(output, format, verbose).len();
    u32::try_from(bytes.div_ceil(4)).unwrap_or(u32::MAX)
}

/// One line of `ultragit-read/v1` JSON (compact: empty fields left out, but every
/// region keeps `intent` and `constraints`) and a newline.
pub fn format_json(output: &ReadOutput, verbose: bool) -> String {
    let mut text = output.to_json_string(verbose, false);
    text.push('\n');
    text
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

fn date(region: &ScoredRegion) -> String {
    region.date().format("%Y-%m-%d").to_string()
}

/// `by 2 unannotated commits: abc1234 subject, …` (`code` wraps each hash in
/// backticks), or `None` when nothing changed since.
fn changed_since_text(region: &ScoredRegion, code: bool) -> Option<String> {
    let changes = &region.changed_since;
    if changes.is_empty() {
        return None;
    }
    let commits: Vec<String> = changes
        .iter()
        .map(|c| {
            let sha = short(&c.commit);
            if code {
                format!("`{sha}` {}", c.summary)
            } else {
                format!("{sha} {}", c.summary)
            }
        })
        .collect();
    let noun = if changes.len() == 1 {
        "commit"
    } else {
        "commits"
    };
    Some(format!(
        "by {} unannotated {noun}: {}",
        changes.len(),
        commits.join(", ")
    ))
}

fn lines_text(start: u32, end: u32) -> String {
    if start == end {
        format!("line {start}")
    } else {
        format!("lines {start}–{end}")
    }
}

/// A region's lines as text, with the part its note was written about when
/// that is narrower (`lines 2953–3219, focus 3106–3122`).
fn region_lines_text(scored: &ScoredRegion) -> String {
    let r = &scored.region.lines;
    match scored.focus {
        Some(f) if f != *r => format!(
            "{}, focus {}",
            lines_text(r.start, r.end),
            lines_text(f.start, f.end)
                .trim_start_matches("lines ")
                .trim_start_matches("line ")
        ),
        _ => lines_text(r.start, r.end),
    }
}

/// The units a line-range scope lies in, as one sentence (`Lines 40–45 lie
/// in `connect` (function, lines 30–80).`); `None` when it names none.
fn units_text(scope: &ScopeEcho, style: Style) -> Option<String> {
    let range = scope.line_range?;
    if scope.units.is_empty() || scope.anchor_name.is_some() {
        return None;
    }
    let units: Vec<String> = scope
        .units
        .iter()
        .map(|u| {
            format!(
                "{} ({}, {})",
                style.code(&u.name),
                u.unit_type,
                lines_text(u.lines.start, u.lines.end)
            )
        })
        .collect();
    let lines = lines_text(range.start, range.end);
    let verb = if range.start == range.end {
        "lies"
    } else {
        "lie"
    };
    Some(format!(
        "{}{} of {} {verb} in {}: their annotations count as for the unit.",
        lines[..1].to_uppercase(),
        &lines[1..],
        scope.file,
        units.join(", ")
    ))
}

/// The scope's anchor was resolved through the notes, not the outline.
fn by_notes(scope: &ScopeEcho) -> bool {
    scope.resolved_by.as_deref() == Some("notes")
}

/// The scopes an anchor resolved to, each with the unit's name and its lines
/// as text.
fn anchored_scopes(output: &ReadOutput) -> impl Iterator<Item = (&ScopeEcho, &str, String)> {
    output.query.scopes.iter().filter_map(|scope| {
        let (name, range) = (scope.anchor_name.as_deref()?, scope.line_range?);
        Some((scope, name, lines_text(range.start, range.end)))
    })
}

/// The two renderings for reading: markdown (for models) and pretty (for
/// people) show the same parts of an output with different marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Markdown,
    Pretty,
}

impl Style {
    /// `name` as code: in backticks in markdown, bare in pretty.
    fn code(self, name: &str) -> String {
        match self {
            Style::Markdown => format!("`{name}`"),
            Style::Pretty => name.to_owned(),
        }
    }

    /// What to add to a scope's line when its anchor was resolved through the
    /// notes, not the outline.
    fn resolution(self, scope: &ScopeEcho) -> &'static str {
        match self {
            _ if !by_notes(scope) => "",
            Style::Markdown => {
                " (resolved through the annotations that name it — tree-sitter sees no such unit — and blame for today's lines)"
            }
            Style::Pretty => " [resolved through the annotations and blame]",
        }
    }

    /// A `title`d section of one line per item (a markdown `##` heading and
    /// bullets, or a lower-case `title:` and indented lines); nothing when
    /// there are no items.
    fn section(self, out: &mut String, title: &str, items: impl Iterator<Item = String>) {
        let mut items = items.peekable();
        if items.peek().is_none() {
            return;
        }
        let bullet = match self {
            Style::Markdown => {
                let _ = write!(out, "\n## {title}\n\n");
                "- "
            }
            Style::Pretty => {
                let _ = writeln!(out, "\n{}:", title.to_lowercase());
                "  "
            }
        };
        for item in items {
            let _ = writeln!(out, "{bullet}{item}");
        }
    }
}

/// What follows the regions, in both renderings: what depends on the code,
/// the cross-cutting concerns, the counters and the trimming notice.
fn write_footer(out: &mut String, output: &ReadOutput, style: Style) {
    let dependencies = output.dependencies_on_this.iter();
    style.section(
        out,
        "Dependencies on this",
        dependencies.map(|dep| dependency_text(dep, style)),
    );
    let concerns = output.cross_cutting.iter();
    style.section(
        out,
        "Cross-cutting concerns",
        concerns.map(|concern| concern_text(concern, style)),
    );
    let s = &output.stats;
    let counts = [
        ("commits examined", s.commits_examined),
        ("annotations found", s.annotations_found),
        ("regions returned", s.regions_returned),
        ("related hops", s.related_hops),
    ];
    let _ = match style {
        Style::Markdown => {
            let counts = counts.map(|(label, n)| format!("{label}: {n}"));
            writeln!(out, "\n_{}_", counts.join(" · "))
        }
        Style::Pretty => {
            let counts = counts.map(|(label, n)| format!("{label} {n}"));
            writeln!(out, "\n{}", counts.join(", "))
        }
    };
    if s.items_retired > 0 {
        let n = s.items_retired;
        let items = if n == 1 { "item" } else { "items" };
        let _ = match style {
            Style::Markdown => writeln!(
                out,
                "_{n} retired {items} withheld (retired by a later note, or of a flagged region)_"
            ),
            Style::Pretty => writeln!(
                out,
                "{n} retired {items} withheld (retired by a later note, or of a flagged region)"
            ),
        };
    }
    if let Some(t) = &output.trimmed {
        let (kept, of, strategy) = (t.returned_regions, t.original_regions, &t.strategy);
        let tokens = t.estimated_tokens;
        let _ = match style {
            Style::Markdown => {
                let decisions = match t.dropped_decisions {
                    0 => String::new(),
                    n => format!(
                        "; {n} lowest-ranked decisions left out, raise --max-tokens to see them"
                    ),
                };
                writeln!(
                    out,
                    "\n> **Trimmed to fit the token budget:** {kept} of {of} annotated changes shown ({strategy}){decisions}; ~{tokens} tokens."
                )
            }
            Style::Pretty => {
                let dropped: Vec<&str> = t.dropped_commits.iter().map(|c| short(c)).collect();
                let dropped = if dropped.is_empty() {
                    "none".to_owned()
                } else {
                    dropped.join(", ")
                };
                writeln!(
                    out,
                    "trimmed: {kept} of {of} regions kept ({strategy}), {} decisions dropped, ~{tokens} tokens; dropped commits: {dropped}",
                    t.dropped_decisions
                )
            }
        };
    }
}

/// `file anchor depends on target: nature (commit)`.
fn dependency_text(dep: &DependencyEntry, style: Style) -> String {
    let [file, anchor, target, commit] = [
        &dep.file,
        &dep.anchor,
        &dep.target_anchor,
        short(&dep.commit),
    ]
    .map(|s| style.code(s));
    let link = match style {
        Style::Markdown => "depends on",
        Style::Pretty => "->",
    };
    format!("{file} {anchor} {link} {target}: {} ({commit})", dep.nature)
}

/// `description — nature (regions: …; commit)`.
fn concern_text(concern: &CrossCuttingEntry, style: Style) -> String {
    let regions: Vec<String> = concern.regions.iter().map(|r| style.code(r)).collect();
    let regions = regions.join(", ");
    let commit = style.code(short(&concern.commit));
    let (description, nature) = (&concern.description, &concern.nature);
    match style {
        Style::Markdown => format!("{description} — {nature} (regions: {regions}; {commit})"),
        Style::Pretty => format!("{description} ({nature}; regions: {regions}; {commit})"),
    }
}

/// A related annotation: `commit anchor — relationship (confidence)` and its
/// intent.
fn related_text(rel: &ResolvedRelated, style: Style) -> String {
    let (sha, anchor) = (style.code(short(&rel.commit)), style.code(&rel.anchor));
    let (relationship, confidence) = (&rel.relationship, rel.confidence);
    let (text, before_intent) = match style {
        Style::Markdown => (
            format!("{sha} {anchor} — {relationship} (confidence {confidence:.3})"),
            ": ",
        ),
        Style::Pretty => (
            format!("{sha} {anchor}: {relationship} ({confidence:.3})"),
            " — ",
        ),
    };
    match &rel.intent {
        Some(intent) => format!("{text}{before_intent}{intent}"),
        None => text,
    }
}

/// What the query was, for headers.
fn query_title(output: &ReadOutput) -> String {
    let q = &output.query;
    let mut title = q.files.join(", ");
    if let Some(anchor) = &q.anchor {
        title.push_str(&format!(" — {anchor}"));
    }
    if let Some(lines) = q.lines {
        title.push_str(&format!(" ({})", lines_text(lines.start, lines.end)));
    }
    title
}

/// Structured markdown. Text from notes is untrusted: control characters
/// (escape sequences, carriage returns, bidi overrides) come out as visible
/// escapes, never raw ([`safe_io::term::sanitize`]).
pub fn format_markdown(output: &ReadOutput, verbose: bool) -> String {
    terminal_safe(markdown_text(output, verbose))
}

/// `text` with every control character a terminal would act on escaped.
fn terminal_safe(text: String) -> String {
    match safe_io::term::sanitize(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

fn markdown_text(output: &ReadOutput, verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Context for {}", query_title(output));
    let q = &output.query;
    if q.ambiguous_anchor {
        let units: Vec<String> = q
            .scopes
            .iter()
            .filter(|s| s.ambiguous)
            .map(|s| {
                let name = s.anchor_name.as_deref().unwrap_or("?");
                match s.line_range {
                    Some(r) => format!("`{name}` ({})", lines_text(r.start, r.end)),
                    None => format!("`{name}`"),
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "\n> **Ambiguous anchor:** matched {}",
            units.join(", ")
        );
    } else {
        for (scope, name, lines) in anchored_scopes(output) {
            if let Some(kind) = &scope.anchor_type {
                let notes = Style::Markdown.resolution(scope);
                let _ = writeln!(out, "\n`{name}` in {}: {kind}, {lines}{notes}", scope.file);
            }
        }
    }
    for text in q
        .scopes
        .iter()
        .filter_map(|s| units_text(s, Style::Markdown))
    {
        let _ = writeln!(out, "\n{text}");
    }
    for warning in &output.warnings {
        let _ = writeln!(out, "\n> **Warning:** {warning}");
    }
    if output.regions.is_empty() {
        if output.trimmed.is_some() {
            let _ = writeln!(out, "\n_Every region was trimmed to fit the token budget._");
        } else {
            let _ = writeln!(out, "\n_No annotated regions match this query._");
        }
    }
    write_decisions_markdown(&mut out, output);
    if !output.regions.is_empty() {
        out.push_str("\n## Annotated changes, best first\n\n");
    }
    let single_unit = single_unit(output);
    for region in &output.regions {
        write_region_markdown(&mut out, region, single_unit, verbose);
    }
    write_footer(&mut out, output, Style::Markdown);
    out
}

/// The decisions, by kind: `## Constraints`, `## Risks`, `## Depends on`,
/// one bullet each with the commits that record it.
fn write_decisions_markdown(out: &mut String, output: &ReadOutput) {
    let one_unit = output
        .decisions
        .windows(2)
        .all(|w| w[0].file == w[1].file && w[0].anchor == w[1].anchor)
        && output.query.anchor.is_some();
    for (kind, title) in [
        (Decision::CONSTRAINT, "Constraints"),
        (Decision::RISK, "Risks"),
        (Decision::DEPENDENCY, "Depends on"),
    ] {
        let items = output.decisions.iter().filter(|d| d.kind == kind).map(|d| {
            match (one_unit, output.query.files.len() > 1) {
                (true, _) => decision_text(d),
                (false, false) => format!("`{}`: {}", d.anchor, decision_text(d)),
                (false, true) => format!("{} `{}`: {}", d.file, d.anchor, decision_text(d)),
            }
        });
        Style::Markdown.section(out, title, items);
    }
}

/// `text (`abc1234`)`, a dependency's target first, a constraint the writer
/// inferred marked so.
fn decision_text(decision: &Decision) -> String {
    let commits: Vec<String> = decision
        .commits
        .iter()
        .map(|c| format!("`{}`", short(c)))
        .collect();
    let inferred = match decision.source.as_deref() {
        Some("inferred") => ", inferred",
        _ => "",
    };
    let text = decision.text.trim();
    match &decision.on {
        Some(on) => {
            let (file, anchor) = on.split_once(':').unwrap_or((on, ""));
            format!("`{file}` `{anchor}`: {text} ({})", commits.join(", "))
        }
        None => format!("{text} ({}{inferred})", commits.join(", ")),
    }
}

/// The one unit every region of `output` is about, when the query named one
/// (then a region's line need not repeat its file and anchor).
fn single_unit(output: &ReadOutput) -> bool {
    output.query.anchor.is_some()
        && output.query.scopes.len() == 1
        && output.regions.iter().all(|r| {
            r.region.file == output.query.scopes[0].file
                && Some(r.region.ast_anchor.name.as_str())
                    == output.query.scopes[0].anchor_name.as_deref()
        })
}

/// One region as a bullet: commit, date, confidence, lines (and its unit
/// when the read covers several) and intent; then, indented, its reasoning,
/// flags and corrections, later unannotated changes, and in verbose output
/// the factors, signature, tags and related annotations. Its constraints,
/// risks and dependencies are among the decisions above.
fn write_region_markdown(
    out: &mut String,
    scored: &ScoredRegion,
    single_unit: bool,
    verbose: bool,
) {
    let r = &scored.region;
    let unit = if single_unit {
        String::new()
    } else {
        format!("{} `{}` ", r.file, r.ast_anchor.name)
    };
    let _ = writeln!(
        out,
        "- {unit}`{}` {} · {:.3} · {}: {}",
        short(&scored.commit_sha),
        date(scored),
        scored.confidence,
        region_lines_text(scored),
        one_line(&r.intent)
    );
    crate::corrections::write_compact_markdown(out, scored);
    if let Some(changed) = changed_since_text(scored, true) {
        let _ = writeln!(out, "  **Changed since** {changed}");
    }
    if let Some(reasoning) = r.reasoning.as_deref().filter(|t| !t.trim().is_empty()) {
        let _ = writeln!(out, "  Why: {}", one_line(reasoning));
    }
    if verbose {
        let f = &scored.confidence_factors;
        let _ = writeln!(
            out,
            "  factors: recency {:.3} · context {:.3} · anchor {:.3} · provenance {:.3} · {}",
            f.recency, f.context_level, f.anchor_stability, f.provenance, r.ast_anchor.unit_type
        );
        if let Some(signature) = &r.ast_anchor.signature {
            let _ = writeln!(out, "  signature: `{signature}`");
        }
        if !r.tags.is_empty() {
            let _ = writeln!(out, "  tags: {}", r.tags.join(", "));
        }
        for rel in &scored.related {
            let _ = writeln!(out, "  related: {}", related_text(rel, Style::Markdown));
        }
    }
}

/// `text` with every run of whitespace (line breaks included) as one space:
/// note text cannot open a heading or a list of its own.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Plain text for people; note text is made terminal-safe as in
/// [`format_markdown`]. Part of the published API, beside the other two
/// renderings (our binaries go through [`render`]).
pub fn format_pretty(output: &ReadOutput, verbose: bool) -> String {
    terminal_safe(pretty_text(output, verbose))
}

/// Plain text for people.
fn pretty_text(output: &ReadOutput, verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ultragit read: {}", query_title(output));
    for (scope, name, lines) in anchored_scopes(output) {
        let kind = scope.anchor_type.as_deref().unwrap_or("unit");
        let ambiguous = if scope.ambiguous { " [ambiguous]" } else { "" };
        let notes = Style::Pretty.resolution(scope);
        let _ = writeln!(
            out,
            "  scope: {} {name} ({kind}, {lines}){ambiguous}{notes}",
            scope.file
        );
    }
    for text in output
        .query
        .scopes
        .iter()
        .filter_map(|s| units_text(s, Style::Pretty))
    {
        let _ = writeln!(out, "  scope: {text}");
    }
    for warning in &output.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    if output.regions.is_empty() {
        let _ = writeln!(out, "\nNo annotated regions match this query.");
    }
    for (i, scored) in output.regions.iter().enumerate() {
        let r = &scored.region;
        let _ = writeln!(
            out,
            "\n[{}] {}  {}  {}",
            i + 1,
            r.file,
            r.ast_anchor.name,
            region_lines_text(scored)
        );
        field(
            &mut out,
            "commit",
            &format!(
                "{} ({}; annotated {})",
                short(&scored.commit_sha),
                scored.date().to_rfc3339(),
                scored.timestamp.to_rfc3339()
            ),
        );
        if let Some(changed) = changed_since_text(scored, false) {
            field(&mut out, "changed", &changed);
        }
        let f = &scored.confidence_factors;
        field(
            &mut out,
            "confidence",
            &format!(
                "{:.3}  (recency {:.3}, context {:.3}, anchor {:.3}, provenance {:.3})",
                scored.confidence, f.recency, f.context_level, f.anchor_stability, f.provenance
            ),
        );
        crate::corrections::write_pretty(&mut out, scored);
        field(&mut out, "kind", &r.ast_anchor.unit_type);
        if let Some(signature) = &r.ast_anchor.signature {
            field(&mut out, "signature", signature);
        } else if verbose {
            field(&mut out, "signature", "-");
        }
        field(&mut out, "intent", &r.intent);
        optional(&mut out, "reasoning", r.reasoning.as_deref(), verbose);
        let constraints: Vec<String> = r
            .constraints
            .iter()
            .map(|c| format!("{} [{}]", c.text, c.source.as_str()))
            .collect();
        items(&mut out, "constraints", &constraints, true);
        let deps: Vec<String> = r
            .semantic_dependencies
            .iter()
            .map(|d| format!("{} {}: {}", d.file, d.anchor, d.nature))
            .collect();
        items(&mut out, "depends on", &deps, verbose);
        if !r.tags.is_empty() || verbose {
            field(
                &mut out,
                "tags",
                &if r.tags.is_empty() {
                    "-".to_owned()
                } else {
                    r.tags.join(", ")
                },
            );
        }
        optional(&mut out, "risk", r.risk_notes.as_deref(), verbose);
        let related: Vec<String> = scored
            .related
            .iter()
            .map(|rel| related_text(rel, Style::Pretty))
            .collect();
        items(&mut out, "related", &related, verbose);
    }
    // The decisions whose regions are not shown (the region cap or the
    // budget left them out): still handed over.
    let shown = |commit: &String| output.regions.iter().any(|r| &r.commit_sha == commit);
    Style::Pretty.section(
        &mut out,
        "Decisions of changes not shown",
        output
            .decisions
            .iter()
            .filter(|d| !d.commits.iter().any(shown))
            .map(|d| format!("{}: {}", d.kind, decision_text(d))),
    );
    write_footer(&mut out, output, Style::Pretty);
    out
}

const LABEL_WIDTH: usize = 12;

fn field(out: &mut String, label: &str, value: &str) {
    let mut lines = value.lines();
    let first = lines.next().unwrap_or("");
    let _ = writeln!(out, "    {label:<LABEL_WIDTH$} {first}");
    for rest in lines {
        let _ = writeln!(out, "    {:<LABEL_WIDTH$} {rest}", "");
    }
}

fn optional(out: &mut String, label: &str, value: Option<&str>, verbose: bool) {
    match value {
        Some(v) if !v.trim().is_empty() => field(out, label, v),
        _ if verbose => field(out, label, "-"),
        _ => {}
    }
}

fn items(out: &mut String, label: &str, values: &[String], always: bool) {
    if values.is_empty() {
        if always {
            field(out, label, "-");
        }
        return;
    }
    for (i, value) in values.iter().enumerate() {
        field(out, if i == 0 { label } else { "" }, &format!("- {value}"));
    }
}
