//! BERT's tokenizer as potion-base-8M's tokenizer.json sets it up: the
//! BertNormalizer (clean the text, space out CJK characters, strip accents,
//! lower-case), the BertPreTokenizer (split on white space and punctuation) and
//! WordPiece (the longest piece of the vocabulary first, `##` before the rest of
//! a word; a word with no split is `[UNK]`). Checked against Hugging Face's
//! `tokenizers` on the cases of tests/fixtures/semantic/reference.json.

use crate::fxhash::FxHashMap as HashMap;

/// A word longer than this many characters is `[UNK]` (max_input_chars_per_word).
const MAX_WORD_CHARS: usize = 100;

pub struct Vocab {
    ids: HashMap<String, u32>,
    pub unk: u32,
}

impl Vocab {
    /// The vocabulary, one token a line in id order (vocab.txt).
    pub fn parse(text: &str) -> Vocab {
        let ids: HashMap<String, u32> = text.lines().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        let unk = ids.get("[UNK]").copied().unwrap_or(0);
        Vocab { ids, unk }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids of a text's tokens, without special tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = vec![];
        for word in words(&normalize(text)) {
            self.word_pieces(word, &mut out);
        }
        out
    }

    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let before = out.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(id) = self.ids.get(&piece) {
                    found = Some(*id);
                    break;
                }
                end = word[..end].char_indices().next_back().map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(before);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// The BertNormalizer with clean_text, handle_chinese_chars, strip_accents (on,
/// since lowercase is) and lowercase.
pub fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_chinese(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else if c.is_whitespace() {
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let stripped: String = decompose(&cleaned).chars().filter(|c| !is_nonspacing_mark(*c)).collect();
    stripped.to_lowercase()
}

/// Words split on white space, each punctuation character a word of its own.
fn words(text: &str) -> Vec<&str> {
    let mut out = vec![];
    for chunk in text.split(char::is_whitespace).filter(|w| !w.is_empty()) {
        let mut start = 0;
        for (i, c) in chunk.char_indices() {
            if is_punctuation(c) {
                if start < i {
                    out.push(&chunk[start..i]);
                }
                out.push(&chunk[i..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        if start < chunk.len() {
            out.push(&chunk[start..]);
        }
    }
    out
}

/// Control characters as BERT counts them (tab, new line and return are white space).
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    // Cc, and the format characters (Cf) text carries.
    c.is_control()
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

fn is_chinese(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// Combining marks (Mn) that accents decompose into.
fn is_nonspacing_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0483..=0x0487 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20F0
        | 0x302A..=0x302D | 0x3099..=0x309A | 0xFE20..=0xFE2F)
}

/// Punctuation as BERT counts it: every ASCII symbol, and Unicode's punctuation (P*).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0xA1 | 0xA7 | 0xAB | 0xB6 | 0xB7 | 0xBB | 0xBF | 0x37E | 0x387 | 0x55A..=0x55F | 0x589 | 0x58A
            | 0x5BE | 0x5C0 | 0x5C3 | 0x5C6 | 0x5F3 | 0x5F4 | 0x609 | 0x60A | 0x60C | 0x60D | 0x61B | 0x61E | 0x61F
            | 0x66A..=0x66D | 0x6D4 | 0x964 | 0x965 | 0x970 | 0xE4F | 0xE5A | 0xE5B
            | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E | 0x207D | 0x207E
            | 0x208D | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A | 0x2768..=0x2775 | 0x27C5 | 0x27C6
            | 0x27E6..=0x27EF | 0x2983..=0x2998 | 0x29D8..=0x29DB | 0x29FC | 0x29FD | 0x2CF9..=0x2CFC
            | 0x2CFE | 0x2CFF | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
            | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB | 0xFE10..=0xFE19 | 0xFE30..=0xFE52
            | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A
            | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F | 0xFF20 | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D
            | 0xFF5F..=0xFF65)
}

/// Canonical decomposition (NFD).
#[cfg(not(target_arch = "wasm32"))]
fn decompose(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if s.is_ascii() {
        return s.to_string();
    }
    s.nfd().collect()
}

/// In wasm the host's JavaScript decomposes (as names.rs normalises).
#[cfg(target_arch = "wasm32")]
fn decompose(s: &str) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    String::from(js_sys::JsString::from(s).normalize("NFD"))
}
