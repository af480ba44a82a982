//! A small regular-expression matcher for `pattern:` constraints on literals:
//! literals, `.`, `^`, `$`, classes `[a-z]`/`[^...]`, escapes `\d \w \s`,
//! groups with `|`, and the quantifiers `* + ? {n} {n,} {n,m}`. Search
//! semantics (as JSON Schema): the pattern may match anywhere unless anchored.
//! Anything else is "unsupported" (`None`) and the literal is not judged.

type Ranges = Vec<(char, char)>;

#[derive(Clone, Debug)]
enum Node {
    Char(char),
    Any,
    Class(Ranges, bool),
    Start,
    End,
    Group(Vec<Seq>),
}

type Seq = Vec<(Node, u32, Option<u32>)>;

/// Whether `pattern` matches somewhere in `text`; `None` when the pattern
/// uses syntax this matcher does not support.
pub(crate) fn matches(pattern: &str, text: &str) -> Option<bool> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pos = 0;
    let alts = parse_alts(&chars, &mut pos)?;
    if pos != chars.len() {
        return None;
    }
    let input: Vec<char> = text.chars().collect();
    let start: Vec<usize> = (0..=input.len()).collect();
    let node = Node::Group(alts);
    Some(!step(&node, &input, &start).is_empty())
}

fn parse_alts(p: &[char], pos: &mut usize) -> Option<Vec<Seq>> {
    let mut alts = vec![parse_seq(p, pos)?];
    while p.get(*pos) == Some(&'|') {
        *pos += 1;
        alts.push(parse_seq(p, pos)?);
    }
    Some(alts)
}

fn parse_seq(p: &[char], pos: &mut usize) -> Option<Seq> {
    let mut seq = Vec::new();
    while let Some(&c) = p.get(*pos) {
        if c == '|' || c == ')' {
            break;
        }
        let node = parse_atom(p, pos)?;
        let (min, max) = parse_quant(p, pos)?;
        seq.push((node, min, max));
    }
    Some(seq)
}

fn parse_atom(p: &[char], pos: &mut usize) -> Option<Node> {
    let c = *p.get(*pos)?;
    *pos += 1;
    Some(match c {
        '.' => Node::Any,
        '^' => Node::Start,
        '$' => Node::End,
        '(' => {
            if p.get(*pos) == Some(&'?') {
                return None;
            }
            let alts = parse_alts(p, pos)?;
            if p.get(*pos) != Some(&')') {
                return None;
            }
            *pos += 1;
            Node::Group(alts)
        }
        '[' => parse_class(p, pos)?,
        '\\' => {
            let e = *p.get(*pos)?;
            *pos += 1;
            escape(e)?
        }
        '*' | '+' | '?' | '{' | ')' => return None,
        other => Node::Char(other),
    })
}

fn escape(e: char) -> Option<Node> {
    let digit = vec![('0', '9')];
    let word = vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
    let space = vec![(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')];
    Some(match e {
        'd' => Node::Class(digit, false),
        'D' => Node::Class(digit, true),
        'w' => Node::Class(word, false),
        'W' => Node::Class(word, true),
        's' => Node::Class(space, false),
        'S' => Node::Class(space, true),
        c if c.is_ascii_alphanumeric() => return None,
        c => Node::Char(c),
    })
}

fn parse_class(p: &[char], pos: &mut usize) -> Option<Node> {
    let negated = p.get(*pos) == Some(&'^');
    if negated {
        *pos += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *p.get(*pos)?;
        *pos += 1;
        if c == ']' && !first {
            break;
        }
        first = false;
        let lo = if c == '\\' {
            let e = *p.get(*pos)?;
            *pos += 1;
            match escape(e)? {
                Node::Class(r, false) => {
                    ranges.extend(r);
                    continue;
                }
                Node::Char(ch) => ch,
                _ => return None,
            }
        } else {
            c
        };
        if p.get(*pos) == Some(&'-') && p.get(*pos + 1).is_some_and(|n| *n != ']') {
            let hi = *p.get(*pos + 1)?;
            *pos += 2;
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
    Some(Node::Class(ranges, negated))
}

fn parse_quant(p: &[char], pos: &mut usize) -> Option<(u32, Option<u32>)> {
    let q = match p.get(*pos) {
        Some('*') => (0, None),
        Some('+') => (1, None),
        Some('?') => (0, Some(1)),
        Some('{') => return parse_braces(p, pos),
        _ => return Some((1, Some(1))),
    };
    *pos += 1;
    Some(q)
}

fn parse_braces(p: &[char], pos: &mut usize) -> Option<(u32, Option<u32>)> {
    let close = p.get(*pos..)?.iter().position(|c| *c == '}')? + *pos;
    let inner: String = p.get(*pos + 1..close)?.iter().collect();
    *pos = close + 1;
    match inner.split_once(',') {
        None => {
            let n = inner.trim().parse().ok()?;
            Some((n, Some(n)))
        }
        Some((lo, hi)) => {
            let lo = lo.trim().parse().ok()?;
            let hi = if hi.trim().is_empty() {
                None
            } else {
                Some(hi.trim().parse().ok()?)
            };
            Some((lo, hi))
        }
    }
}

/// Every position reachable after matching `node` once from any of `from`.
fn step(node: &Node, input: &[char], from: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    for &p in from {
        match node {
            Node::Start => push(&mut out, p, p == 0),
            Node::End => push(&mut out, p, p == input.len()),
            Node::Any => push(&mut out, p + 1, p < input.len()),
            Node::Char(c) => push(&mut out, p + 1, input.get(p) == Some(c)),
            Node::Class(ranges, neg) => {
                let hit = input
                    .get(p)
                    .is_some_and(|ch| ranges.iter().any(|(lo, hi)| lo <= ch && ch <= hi) != *neg);
                push(&mut out, p + 1, hit);
            }
            Node::Group(alts) => {
                for alt in alts {
                    for end in seq_ends(alt, input, &[p]) {
                        push(&mut out, end, true);
                    }
                }
            }
        }
    }
    out
}

fn seq_ends(seq: &Seq, input: &[char], from: &[usize]) -> Vec<usize> {
    let mut cur = from.to_vec();
    for (node, min, max) in seq {
        cur = repeat(node, *min, *max, input, &cur);
        if cur.is_empty() {
            break;
        }
    }
    cur
}

fn repeat(node: &Node, min: u32, max: Option<u32>, input: &[char], from: &[usize]) -> Vec<usize> {
    let mut result = Vec::new();
    let mut cur = from.to_vec();
    let limit = max
        .unwrap_or(input.len() as u32 + 1)
        .min(input.len() as u32 + 1);
    if min == 0 {
        result.extend(cur.iter().copied());
    }
    for count in 1..=limit.max(min) {
        cur = step(node, input, &cur);
        if cur.is_empty() {
            break;
        }
        if count >= min {
            for p in &cur {
                push(&mut result, *p, true);
            }
        }
    }
    result.sort_unstable();
    result.dedup();
    result
}

fn push(out: &mut Vec<usize>, p: usize, ok: bool) {
    if ok && !out.contains(&p) {
        out.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn anchored_and_unanchored_patterns() {
        assert_eq!(matches("^[a-z]+$", "nightly"), Some(true));
        assert_eq!(matches("^[a-z]+$", "Nightly"), Some(false));
        assert_eq!(matches("\\d{3}", "ab123"), Some(true));
        assert_eq!(matches("^(ab|cd)*$", "abcdab"), Some(true));
        assert_eq!(matches("^(ab|cd)*$", "abc"), Some(false));
        assert_eq!(matches("(?=x)", "x"), None);
    }
}
