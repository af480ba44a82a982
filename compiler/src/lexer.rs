//! The logos lexer: source text to a flat vector of tokens with `u32` spans.
