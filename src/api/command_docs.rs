//! Argument documentation for COMMAND DOCS (and redis-cli's hints), written in a compact
//! syntax next to each command:
//!
//! `key:key error_rate:double [EXPANSION expansion:integer] [NONSCALING] ITEMS item:string...`
//!
//! `name:type` is an argument (types: key, string, integer, double), `...` makes it
//! repeatable, `[...]` optional, an UPPERCASE word a literal token (alone: a flag; before an
//! argument: that argument's keyword), `[A|B|C]` a choice of tokens, and
//! `(ITEMS item:string... | FROM source:string)` a required choice of arguments (each
//! alternative one argument, a keyword allowed; the choice named after them,
//! `item_source`).

/// The kinds of argument Redis distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Key,
    String,
    Integer,
    Double,
    PureToken,
    OneOf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgDoc {
    pub name: String,
    pub kind: ArgKind,
    pub token: Option<String>,
    pub optional: bool,
    pub multiple: bool,
    pub subargs: Vec<ArgDoc>,
}

impl ArgDoc {
    fn new(name: &str, kind: ArgKind) -> ArgDoc {
        ArgDoc {
            name: name.to_string(),
            kind,
            token: None,
            optional: false,
            multiple: false,
            subargs: Vec::new(),
        }
    }
}

fn is_token(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

fn typed(word: &str) -> Result<ArgDoc, String> {
    let (word, multiple) = match word.strip_suffix("...") {
        Some(w) => (w, true),
        None => (word, false),
    };
    let (name, kind) = word
        .split_once(':')
        .ok_or_else(|| format!("argument {word:?} has no type"))?;
    let kind = match kind {
        "key" => ArgKind::Key,
        "string" => ArgKind::String,
        "integer" => ArgKind::Integer,
        "double" => ArgKind::Double,
        other => return Err(format!("unknown argument type {other:?}")),
    };
    let mut arg = ArgDoc::new(name, kind);
    arg.multiple = multiple;
    Ok(arg)
}

fn pure_token(word: &str) -> ArgDoc {
    let mut arg = ArgDoc::new(&word.to_ascii_lowercase(), ArgKind::PureToken);
    arg.token = Some(word.to_string());
    arg
}

/// Parses one group of words (a whole spec, or the inside of brackets).
fn parse_words(words: &[&str]) -> Result<Vec<ArgDoc>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        if word == "(" {
            let close = words[i..]
                .iter()
                .position(|w| *w == ")")
                .ok_or("unclosed (")?
                + i;
            out.push(one_of(&words[i + 1..close])?);
            i = close + 1;
        } else if word == "[" {
            let close = words[i..]
                .iter()
                .position(|w| *w == "]")
                .ok_or("unclosed [")?
                + i;
            let inner = &words[i + 1..close];
            let mut arg = if inner.len() == 1 && inner[0].contains('|') {
                let mut choice = ArgDoc::new(
                    &inner[0].to_ascii_lowercase().replace('|', "_"),
                    ArgKind::OneOf,
                );
                choice.subargs = inner[0].split('|').map(pure_token).collect();
                choice
            } else {
                let mut parsed = parse_words(inner)?;
                if parsed.len() != 1 {
                    return Err(format!("brackets must hold one argument: {inner:?}"));
                }
                parsed.remove(0)
            };
            arg.optional = true;
            out.push(arg);
            i = close + 1;
        } else if is_token(word) {
            match words.get(i + 1) {
                Some(next) if next.contains(':') => {
                    let mut arg = typed(next)?;
                    arg.token = Some(word.to_string());
                    out.push(arg);
                    i += 2;
                }
                _ => {
                    out.push(pure_token(word));
                    i += 1;
                }
            }
        } else {
            out.push(typed(word)?);
            i += 1;
        }
    }
    Ok(out)
}

/// The inside of `( … | … )`: alternatives of one argument each.
fn one_of(inner: &[&str]) -> Result<ArgDoc, String> {
    let alternatives = inner
        .split(|w| *w == "|")
        .map(|words| {
            let mut parsed = parse_words(words)?;
            if parsed.len() != 1 {
                return Err(format!("an alternative must be one argument: {words:?}"));
            }
            Ok(parsed.remove(0))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if alternatives.len() < 2 {
        return Err(format!("( ) must hold alternatives: {inner:?}"));
    }
    let names: Vec<&str> = alternatives.iter().map(|a| a.name.as_str()).collect();
    let mut choice = ArgDoc::new(&names.join("_"), ArgKind::OneOf);
    choice.subargs = alternatives;
    Ok(choice)
}

/// Parses a command's argument spec.
pub fn parse(spec: &str) -> Result<Vec<ArgDoc>, String> {
    let spaced = spec
        .replace('[', " [ ")
        .replace(']', " ] ")
        .replace('(', " ( ")
        .replace(')', " ) ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    parse_words(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let args = parse(
            "key:key error_rate:double [EXPANSION expansion:integer] [NONSCALING] \
             [CAPACITY|SIZE] ITEMS item:string...",
        )
        .unwrap();
        type Summary<'a> = (&'a str, ArgKind, Option<&'a str>, bool, bool, usize);
        let summary: Vec<Summary> = args
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.kind,
                    a.token.as_deref(),
                    a.optional,
                    a.multiple,
                    a.subargs.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("key", ArgKind::Key, None, false, false, 0),
                ("error_rate", ArgKind::Double, None, false, false, 0),
                (
                    "expansion",
                    ArgKind::Integer,
                    Some("EXPANSION"),
                    true,
                    false,
                    0
                ),
                (
                    "nonscaling",
                    ArgKind::PureToken,
                    Some("NONSCALING"),
                    true,
                    false,
                    0
                ),
                ("capacity_size", ArgKind::OneOf, None, true, false, 2),
                ("item", ArgKind::String, Some("ITEMS"), false, true, 0),
            ]
        );
        assert_eq!(args[4].subargs[1].token.as_deref(), Some("SIZE"));
    }

    /// A required choice of arguments: one OneOf whose alternatives keep their keyword,
    /// type and repetition.
    #[test]
    fn parses_a_choice_of_arguments() {
        let args =
            parse("key:key rate:double (ITEMS item:string... | FROM source:string)").unwrap();
        assert_eq!(args.len(), 3);
        let choice = &args[2];
        assert_eq!(
            (
                choice.name.as_str(),
                choice.kind,
                choice.optional,
                choice.multiple
            ),
            ("item_source", ArgKind::OneOf, false, false)
        );
        let summary: Vec<(&str, ArgKind, Option<&str>, bool)> = choice
            .subargs
            .iter()
            .map(|a| (a.name.as_str(), a.kind, a.token.as_deref(), a.multiple))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("item", ArgKind::String, Some("ITEMS"), true),
                ("source", ArgKind::String, Some("FROM"), false),
            ]
        );
    }

    #[test]
    fn rejects_malformed_specs() {
        assert!(parse("key:key (ITEMS item:string... | FROM source:string").is_err());
        assert!(parse("key:key (ITEMS item:string...)").is_err());
        assert!(parse("key:key (a:string b:string | c:string)").is_err());
        assert!(parse("key").is_err());
        assert!(parse("key:blob").is_err());
        assert!(parse("[EXPANSION expansion:integer").is_err());
        assert!(parse("[a:string b:string]").is_err());
    }
}
