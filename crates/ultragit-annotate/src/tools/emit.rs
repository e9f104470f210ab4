//! The write tools: `emit_annotation` (its anchor checked against the file's
//! outline), `emit_cross_cutting` and `decline_annotation`; each validates what
//! the model emits before collecting it.

use super::*;

pub(super) const EMIT_ANNOTATION: ToolDef<Shared, RegionAnnotation> = ToolDef {
    name: "emit_annotation",
    description: "Emit a structured annotation for one semantic code unit. Call this for each function, type, or code region affected by the commit that warrants annotation. Skip trivial changes.",
    schema: region_schema,
    run: emit_annotation,
};

fn emit_annotation(
    shared: &Shared,
    mut region: RegionAnnotation,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    region.file = region.file.trim().trim_start_matches("./").to_owned();
    let context = &shared.context;
    let files = context.all_paths();
    let probe = one_region_annotation(context, region.clone());
    let problems = probe.validate(&ValidationContext {
        expected_commit: Some(&context.commit.sha),
        commit_files: Some(&files),
    });
    let mut messages: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
    if let Some(text) = context.file_contents.get(&region.file) {
        let total = text.lines().count() as u32;
        if region.lines.end > total.max(1) {
            messages.push(format!(
                "lines {}-{} run past the end of {} ({total} lines at this commit)",
                region.lines.start, region.lines.end, region.file
            ));
        }
    }
    if !messages.is_empty() {
        collected(&shared.collector).rejected += 1;
        return Err(ToolFailure::new(
            "INVALID_ANNOTATION",
            format!("annotation not stored: {}", messages.join("; ")),
        ));
    }
    if let Some(problem) = anchor_problem(context, &region) {
        collected(&shared.collector).rejected += 1;
        return Err(ToolFailure::new(
            "ANCHOR_MISMATCH",
            format!("annotation not stored: {problem}"),
        ));
    }
    let label = format!("{}:{}", region.file, region.ast_anchor.name);
    collected(&shared.collector).regions.push(region);
    Ok(ToolOutput::complete(
        json!({"message": format!("Annotation emitted for {label}")}),
    ))
}

/// What is wrong with `region`'s anchor at the commit, if anything: with an
/// outline, the name must resolve (exactly or unqualified) to a unit of the
/// anchor's kind whose lines overlap the region's; without a grammar (or for a
/// `config` anchor, or a file without units), the name must occur in those
/// lines. A deleted file is not checked. The problem lists the units nearby.
fn anchor_problem(context: &AnnotationContext, region: &RegionAnnotation) -> Option<String> {
    let text = context.file_contents.get(&region.file)?;
    let anchor = &region.ast_anchor;
    let span = outline::LineSpan {
        start: region.lines.start,
        end: region.lines.end,
    };
    let units = match context.ast_outlines.get(&region.file) {
        Some(units) => units.clone(),
        None => match outline::outline(&region.file, text) {
            Ok(units) => units,
            Err(outline::OutlineError::NoGrammar { .. }) => Vec::new(),
            // A grammar that failed is no evidence against the anchor.
            Err(_) => return None,
        },
    };
    if units.is_empty() || anchor.unit_type == "config" {
        return text_anchor_problem(text, &anchor.name, span, &region.file);
    }
    let wanted = anchor.unit_type.as_str();
    let problem = match outline::resolve_anchor(&units, &anchor.name) {
        Err(_) => format!("'{}' is not a unit of {}", anchor.name, region.file),
        Ok(found) if matches!(found.match_kind, outline::MatchKind::Fuzzy { .. }) => format!(
            "'{}' is not a unit of {} (did you mean {}?)",
            anchor.name, region.file, found.units[0].qualified_name
        ),
        Ok(found) => {
            let of_kind: Vec<&outline::Unit> = found
                .units
                .iter()
                .filter(|u| u.kind.anchor_type() == wanted || u.kind.as_str() == wanted)
                .collect();
            if of_kind.is_empty() {
                format!(
                    "'{}' in {} is a {}, not a {wanted}",
                    anchor.name,
                    region.file,
                    found.units[0].kind.anchor_type()
                )
            } else if of_kind.iter().any(|u| overlaps(u.lines, span)) {
                return None;
            } else {
                let at: Vec<String> = of_kind
                    .iter()
                    .map(|u| format!("{}-{}", u.lines.start, u.lines.end))
                    .collect();
                format!(
                    "'{}' is at lines {} of {}, which do not overlap lines {}-{}",
                    anchor.name,
                    at.join(", "),
                    region.file,
                    span.start,
                    span.end
                )
            }
        }
    };
    Some(format!(
        "{problem}. Units at or near lines {}-{}: {}. Use one of these names (ast_anchor.type and lines as listed), or type \"config\" with a name that occurs in the lines for a block outside any unit",
        span.start,
        span.end,
        nearby(&units, span)
    ))
}

fn overlaps(a: outline::LineSpan, b: outline::LineSpan) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The units overlapping `span`, or else the five closest to it, as
/// `L10-17 method Client::connect`.
fn nearby(units: &[outline::Unit], span: outline::LineSpan) -> String {
    let mut chosen: Vec<&outline::Unit> =
        units.iter().filter(|u| overlaps(u.lines, span)).collect();
    if chosen.is_empty() {
        let distance = |u: &outline::Unit| {
            if u.lines.end < span.start {
                span.start - u.lines.end
            } else {
                u.lines.start.saturating_sub(span.end)
            }
        };
        chosen = units.iter().collect();
        chosen.sort_by_key(|u| distance(u));
        chosen.truncate(5);
        chosen.sort_by_key(|u| u.lines.start);
    }
    chosen
        .iter()
        .take(12)
        .map(|u| {
            format!(
                "L{}-{} {} {}",
                u.lines.start,
                u.lines.end,
                u.kind.anchor_type(),
                u.qualified_name
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Without an outline: the anchor's name must occur in the region's lines.
fn text_anchor_problem(
    text: &str,
    name: &str,
    span: outline::LineSpan,
    file: &str,
) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .skip(span.start.saturating_sub(1) as usize)
        .take(span.line_count() as usize)
        .collect();
    let name = name.trim();
    // A qualified name (`server.port`, `Table::row`) may be spread over lines:
    // each of its parts must occur.
    let parts: Vec<&str> = name
        .split(['.', ':', '/', ' '])
        .filter(|p| !p.is_empty())
        .collect();
    let found = |part: &str| lines.iter().any(|l| l.contains(part));
    if found(name) || (!parts.is_empty() && parts.iter().all(|p| found(p))) {
        return None;
    }
    let shown: String = lines
        .iter()
        .take(3)
        .map(|l| l.chars().take(80).collect::<String>())
        .collect::<Vec<_>>()
        .join(" / ");
    Some(format!(
        "'{name}' does not occur in lines {}-{} of {file} (no outline for this file: the anchor name must be text of those lines, e.g. a section or key name); they begin: {shown}",
        span.start, span.end
    ))
}

/// The arguments of `emit_annotation`: one region (spec 000), strict.
pub(crate) fn emit_annotation_schema() -> Value {
    region_schema().into()
}

/// The schema of one region ([`RegionAnnotation`]).
fn region_schema() -> Schema {
    let text = Schema::string;
    let line = || Schema::integer(1, MAX_LINE);
    // An object of required strings.
    let strings = |names: [&str; 3]| {
        names.into_iter().fold(Schema::object(), |object, name| {
            object.required(name, text())
        })
    };
    Schema::object()
        .required("file", text())
        .required(
            "ast_anchor",
            Schema::object()
                .required(
                    "type",
                    text().one_of([
                        "function", "method", "struct", "class", "impl", "module", "const", "type",
                        "config",
                    ]),
                )
                .required("name", text())
                .optional("signature", text()),
        )
        .required(
            "lines",
            Schema::object()
                .required("start", line())
                .required("end", line()),
        )
        .required("intent", text())
        .optional("reasoning", text())
        .optional(
            "constraints",
            Schema::array(
                Schema::object()
                    .required("text", text())
                    .required("source", text().one_of(["author", "inferred"])),
            ),
        )
        .optional(
            "semantic_dependencies",
            Schema::array(strings(["file", "anchor", "nature"])),
        )
        .optional(
            "related_annotations",
            Schema::array(strings(["commit", "anchor", "relationship"])),
        )
        .optional("tags", Schema::array(text()))
        .optional("risk_notes", text())
        .optional("retires", Schema::array(text()))
}

fn one_region_annotation(context: &AnnotationContext, region: RegionAnnotation) -> Annotation {
    let mut annotation = Annotation::new(
        context.commit.sha.clone(),
        chrono::Utc::now().to_rfc3339(),
        "probe",
        ContextLevel::Inferred,
    );
    annotation.regions.push(region);
    annotation
}

/// The parameters of `emit_cross_cutting`, also one item of the structured
/// answer's `cross_cutting`.
pub(crate) fn emit_cross_cutting_schema() -> Value {
    cross_cutting_schema().into()
}

/// The schema of one [`CrossCuttingConcern`].
fn cross_cutting_schema() -> Schema {
    Schema::object()
        .required("description", Schema::string())
        .required("regions", Schema::array(Schema::string()))
        .required("nature", Schema::string())
}

pub(super) const EMIT_CROSS_CUTTING: ToolDef<Collector, CrossCuttingConcern> = ToolDef {
    name: "emit_cross_cutting",
    description: "Emit a cross-cutting concern that spans multiple code regions. These are groups of code that must be updated together.",
    schema: cross_cutting_schema,
    run: emit_cross_cutting,
};

fn emit_cross_cutting(
    collector: &Collector,
    concern: CrossCuttingConcern,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let mut problems = Vec::new();
    if concern.description.trim().is_empty() {
        problems.push("description is empty");
    }
    if concern.nature.trim().is_empty() {
        problems.push("nature is empty");
    }
    if concern
        .regions
        .iter()
        .filter(|r| !r.trim().is_empty())
        .count()
        < 2
    {
        problems.push("a cross-cutting concern names at least two regions (\"file:anchor\")");
    }
    if !problems.is_empty() {
        collected(collector).rejected += 1;
        return Err(ToolFailure::new("INVALID_ANNOTATION", problems.join("; ")));
    }
    collected(collector).cross_cutting.push(concern);
    Ok(ToolOutput::complete(
        json!({"message": "Cross-cutting concern recorded"}),
    ))
}

/// The arguments of `decline_annotation`.
#[derive(Debug, Deserialize)]
pub(crate) struct DeclineArgs {
    reason: String,
}

/// The most of a decline's reason kept.
const DECLINE_REASON_MAX: usize = 300;

/// The one way to record that a commit holds nothing worth annotating.
pub(crate) const DECLINE_ANNOTATION: ToolDef<Collector, DeclineArgs> = ToolDef {
    name: "decline_annotation",
    description: "Record why nothing in this commit is worth annotating (one sentence). Call it alone; it ends the run.",
    schema: || Schema::object().required("reason", Schema::string()),
    run: decline_annotation,
};

fn decline_annotation(
    collector: &Collector,
    args: DeclineArgs,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let reason = args.reason.trim();
    if reason.is_empty() {
        collected(collector).rejected += 1;
        return Err(ToolFailure::invalid_argument(
            "reason is empty: say in one sentence why nothing here is worth recording",
        ));
    }
    let reason: String = if reason.chars().count() > DECLINE_REASON_MAX {
        let mut cut: String = reason.chars().take(DECLINE_REASON_MAX - 1).collect();
        cut.push('…');
        cut
    } else {
        reason.to_owned()
    };
    collected(collector).declined = Some(reason);
    Ok(ToolOutput::complete(
        json!({"message": "Recorded: nothing to annotate in this commit"}),
    ))
}
