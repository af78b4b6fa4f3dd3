// Tsl.g4 — the reader's grammar (docs/language.md §1).
//
// The parse tree this produces never leaves parser/: Reader.cpp converts it at once into
// tsl::Syntax nodes with spans. Delimiter balance, nesting depth and malformed tokens are
// checked on the token stream before parsing (Reader.cpp), so that an unclosed delimiter
// is reported where it opened and the parser only ever sees well-formed input.
grammar Tsl;

program : element* EOF ;

// `#_` drops the form after it; `#_ #_ a b` drops both a and b, as in Clojure.
element : form | discard ;
discard : DISCARD discard* form ;

form
  : OPEN_PAREN element* CLOSE_PAREN       # list
  | OPEN_BRACKET element* CLOSE_BRACKET   # vector
  | OPEN_BRACE element* CLOSE_BRACE       # map
  | QUOTE discard* form                   # quote
  | BACKQUOTE discard* form               # quasiquote
  | UNQUOTE_SPLICING discard* form        # unquoteSplicing
  | UNQUOTE discard* form                 # unquote
  | INT                                   # integer
  | FLOAT                                 # float
  | STRING                                # string
  | KEYWORD                               # keyword
  | SYMBOL                                # symbol
  ;

OPEN_PAREN : '(' ;
CLOSE_PAREN : ')' ;
OPEN_BRACKET : '[' ;
CLOSE_BRACKET : ']' ;
OPEN_BRACE : '{' ;
CLOSE_BRACE : '}' ;
QUOTE : '\'' ;
BACKQUOTE : '`' ;
UNQUOTE_SPLICING : '~@' ;
UNQUOTE : '~' ;
DISCARD : '#_' ;

// Numbers come before symbols so that `-7` is a number and `-` or `->` a symbol.
INT : SIGN? DIGIT+ ;
FLOAT : SIGN? DIGIT+ ( '.' DIGIT+ EXPONENT? | EXPONENT ) ;
// Anything else that starts like a number (`1x`, `1.2.3`, `.5`) is malformed; it is
// longer than INT or FLOAT, so the lexer picks it, and Reader.cpp reports it.
BAD_NUMBER : SIGN? '.'? DIGIT SYMBOL_CHAR* ;

STRING : '"' ( ESCAPE | ~["\\] )* '"' ;
// A string with no closing quote: shorter than STRING whenever the quote exists.
UNTERMINATED_STRING : '"' ( ESCAPE | ~["\\] )* '\\'? ;

KEYWORD : ':' SYMBOL_CHAR+ ;
SYMBOL : SYMBOL_START SYMBOL_CHAR* ;

WHITESPACE : [ \t\r\n\f,]+ -> skip ;
COMMENT : ';' ~[\r\n]* -> skip ;
// Every other character is a token of its own, reported by Reader.cpp; the lexer itself
// never fails.
ERROR_CHAR : . ;

fragment SIGN : [+-] ;
fragment DIGIT : [0-9] ;
fragment EXPONENT : [eE] SIGN? DIGIT+ ;
fragment ESCAPE : '\\' . ;
fragment SYMBOL_START : [a-zA-Z*+!\-_?<>=/.&@%$^|] ;
fragment SYMBOL_CHAR : [a-zA-Z0-9*+!\-_?<>=/.&@%$^|'#] ;
