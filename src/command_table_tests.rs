//! Checks every entry of every family's command table, without a server: names, ACL
//! category, flags, key spec, arity against the argument syntax, `since`.

use crate::api::command_docs::{self, ArgDoc, ArgKind};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess;
use crate::command_table::Family;
use std::collections::HashSet;

/// Each family's prefix and ACL category, stated here independently of the tables
/// (`bloom` and `cuckoo` are RedisBloom's names).
const EXPECTED_FAMILIES: [(&str, &str); 9] = [
    ("bf", "bloom"),
    ("cf", "cuckoo"),
    ("cbf", "cbf"),
    ("wbf", "wbf"),
    ("cms", "cms"),
    ("topk", "topk"),
    ("tdigest", "tdigest"),
    ("sf", "sf"),
    ("xf", "xf"),
];

/// Redis' command flag words (RedisModule_CreateCommand).
const KNOWN_FLAGS: [&str; 20] = [
    "write",
    "readonly",
    "admin",
    "deny-oom",
    "deny-script",
    "allow-loading",
    "pubsub",
    "random",
    "allow-stale",
    "no-monitor",
    "no-slowlog",
    "fast",
    "getkeys-api",
    "no-cluster",
    "no-auth",
    "may-replicate",
    "no-mandatory-keys",
    "blocking",
    "allow-busy",
    "getchannels-api",
];

/// The arguments a command cannot do without, as the syntax states them: each
/// required argument, plus its keyword if it has one; of a required choice, its
/// shortest alternative.
fn required_arguments(docs: &[ArgDoc]) -> usize {
    docs.iter()
        .filter(|arg| !arg.optional)
        .map(|arg| match (&arg.token, arg.kind) {
            (_, ArgKind::OneOf) => alternative_lengths(arg).min().unwrap_or(1),
            (Some(_), kind) if kind != ArgKind::PureToken => 2,
            _ => 1,
        })
        .sum()
}

/// The required arguments of each alternative of a choice.
fn alternative_lengths(choice: &ArgDoc) -> impl Iterator<Item = usize> + '_ {
    choice
        .subargs
        .iter()
        .map(|alt| required_arguments(std::slice::from_ref(alt)))
}

/// Whether the syntax admits more than one argument count: something optional or
/// repeatable, at any depth, or alternatives of different lengths.
fn is_variadic(docs: &[ArgDoc]) -> bool {
    docs.iter().any(|arg| {
        let lengths: HashSet<usize> = alternative_lengths(arg).collect();
        arg.optional || arg.multiple || lengths.len() > 1 || is_variadic(&arg.subargs)
    })
}

fn brackets_balance(syntax: &str) -> bool {
    let (mut depth, mut parens) = (0i32, 0i32);
    for c in syntax.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '(' => parens += 1,
            ')' => parens -= 1,
            '|' if depth == 0 && parens == 0 => return false,
            _ => {}
        }
        if depth < 0 || parens < 0 {
            return false;
        }
    }
    depth == 0 && parens == 0
}

fn is_version(since: &str) -> bool {
    let parts: Vec<&str> = since.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Everything wrong with one entry of `family`'s table.
fn problems(family: &Family, command: &Command) -> Vec<String> {
    let mut found = Vec::new();
    let mut check = |ok: bool, what: &str| {
        if !ok {
            found.push(format!("{}: {what}", command.name));
        }
    };
    let name = command.name;
    check(name == name.to_ascii_lowercase(), "name is not lower case");
    check(
        name.strip_prefix(family.prefix)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|rest| !rest.is_empty()),
        "name lacks the family prefix",
    );
    check(
        command.acl_category == family.acl_category,
        "ACL category is not the family's",
    );
    let flags: Vec<&str> = command.flags.split(' ').collect();
    check(
        flags.iter().all(|flag| KNOWN_FLAGS.contains(flag)),
        "unknown flag word",
    );
    let writes = flags.contains(&"write");
    let reads = flags.contains(&"readonly");
    check(writes != reads, "must be exactly one of write and readonly");
    let access = if writes {
        KeyAccess::Write
    } else {
        KeyAccess::Read
    };
    let merges = command.key == KeyAccess::WriteFromSources;
    check(
        command.key == access || (merges && writes),
        "key access does not match the flags",
    );
    check(!command.summary.is_empty(), "no summary");
    check(!command.complexity.is_empty(), "no complexity");
    check(is_version(command.since), "since is not a version");
    check(
        brackets_balance(command.args),
        "unbalanced [] or | outside []",
    );
    match command_docs::parse(command.args) {
        Ok(docs) => {
            // Registration declares one key, at argument 1.
            check(
                docs.first()
                    .is_some_and(|arg| arg.kind == ArgKind::Key && !arg.optional),
                "the first argument is not the key",
            );
            // A merge: the destination, the key count, the sources (repeatable).
            let keys: Vec<&ArgDoc> = docs.iter().filter(|a| a.kind == ArgKind::Key).collect();
            let sources_follow = docs.get(1).is_some_and(|a| a.kind == ArgKind::Integer)
                && docs
                    .get(2)
                    .is_some_and(|a| a.kind == ArgKind::Key && a.multiple);
            check(
                keys.len() == if merges { 2 } else { 1 },
                "more than one key",
            );
            check(
                !merges || sources_follow,
                "a merge's sources do not follow its key count",
            );
            let required = 1 + required_arguments(&docs) as i32;
            let arity = if is_variadic(&docs) {
                -required
            } else {
                required
            };
            check(
                command.arity == arity,
                &format!("arity {} but the syntax says {arity}", command.arity),
            );
        }
        Err(e) => check(false, &format!("syntax does not parse: {e}")),
    }
    found
}

#[test]
fn every_command_table_entry_is_consistent() {
    let families: Vec<(&str, &str)> = crate::FAMILIES
        .iter()
        .map(|f| (f.prefix, f.acl_category))
        .collect();
    assert_eq!(families, EXPECTED_FAMILIES);
    let categories: Vec<&str> = crate::FAMILIES.iter().map(|f| f.acl_category).collect();
    assert_eq!(categories, crate::acl_categories());
    let mut names = HashSet::new();
    let mut problems_found = Vec::new();
    for family in &crate::FAMILIES {
        let commands = (family.commands)();
        assert!(!commands.is_empty(), "{} has no commands", family.prefix);
        for command in &commands {
            if !names.insert(command.name) {
                problems_found.push(format!("{}: registered twice", command.name));
            }
            problems_found.extend(problems(family, command));
        }
    }
    assert_eq!(names.len(), crate::commands().len());
    assert!(problems_found.is_empty(), "{problems_found:#?}");
}

#[test]
fn the_checks_catch_a_broken_entry() {
    let family = &crate::FAMILIES[0];
    let entry = || (family.commands)().remove(0);
    assert!(problems(family, &entry()).is_empty());
    let broken = [
        (
            Command {
                arity: 3,
                ..entry()
            },
            "arity 3 but the syntax says -4",
        ),
        (
            Command {
                name: "bf.RESERVE",
                ..entry()
            },
            "not lower case",
        ),
        (
            Command {
                name: "cf.reserve",
                ..entry()
            },
            "family prefix",
        ),
        (
            Command {
                name: "bf.",
                ..entry()
            },
            "family prefix",
        ),
        (
            Command {
                acl_category: "cuckoo",
                ..entry()
            },
            "ACL category",
        ),
        (
            Command {
                flags: "write deny-oom fast-ish",
                ..entry()
            },
            "unknown flag",
        ),
        (
            Command {
                flags: "readonly",
                ..entry()
            },
            "does not match the flags",
        ),
        (
            Command {
                flags: "deny-oom",
                ..entry()
            },
            "exactly one of",
        ),
        (
            Command {
                key: KeyAccess::Read,
                ..entry()
            },
            "does not match the flags",
        ),
        (
            Command {
                args: "key:key [EXPANSION expansion:integer",
                ..entry()
            },
            "unbalanced",
        ),
        (
            Command {
                args: "key:key a|b",
                ..entry()
            },
            "unbalanced",
        ),
        (
            Command {
                args: "key:key capacity",
                ..entry()
            },
            "does not parse",
        ),
        (
            Command {
                args: "error_rate:double key:key x:integer",
                ..entry()
            },
            "not the key",
        ),
        (
            Command {
                args: "key:key other:key x:integer",
                ..entry()
            },
            "more than one key",
        ),
        (
            Command {
                args: "key:key (ITEMS item:string... | FROM source:string)",
                arity: -3,
                ..entry()
            },
            "arity -3 but the syntax says -4",
        ),
        (
            Command {
                args: "key:key (a:string | b:string c:integer)",
                arity: 3,
                ..entry()
            },
            "does not parse",
        ),
        (
            Command {
                args: "key:key (A | B b:integer)",
                arity: 3,
                ..entry()
            },
            "arity 3 but the syntax says -3",
        ),
        (
            Command {
                args: "key:key (a:string | b:string",
                ..entry()
            },
            "unbalanced",
        ),
        (
            Command {
                since: "2.4",
                ..entry()
            },
            "not a version",
        ),
        (
            Command {
                summary: "",
                ..entry()
            },
            "no summary",
        ),
    ];
    for (command, expected) in &broken {
        let found = problems(family, command);
        assert!(
            found.iter().any(|problem| problem.contains(expected)),
            "{expected:?} not in {found:?}"
        );
    }
}
