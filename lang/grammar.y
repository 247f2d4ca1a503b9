/*
** lang/grammar.y -- gk's grammar, for the Lemon parser generator.
**
** The Makefile runs `lemon -q -T/usr/share/lemon/lempar.c` on a copy of this
** file in build/gen; the output (grammar.c, grammar.h) is never committed.
**
** Precedence is written as a ladder of nonterminals, loosest first:
**   expr (or) > andx (and) > notx (prefix not) > cmp (== != < <= > >=,
**   non-associative) > sum (+ -) > term (* / % @) > unary (prefix -) >
**   power (**, right-assoc) > postfix (call, index) > atom.
** The ladder makes the odd cases fall out of the grammar rather than out of
** precedence tables: `a < b < c` and `a == not b` are syntax errors, `-x**2`
** is -(x**2) and `2**-1` is 2**(-1).
**
** Actions only call the builders in tree.c (lang_mk_*); those check the
** limits (nesting, tree depth, argument counts) and record the first error in
** the parse state; after an error they return NULL, and the driver feeds no
** more tokens.
**
** Every pointer-valued symbol has a %destructor.  The destructors are empty on
** purpose: nodes and sequences live in the caller's lang_arena and are freed
** in one call by lang_arena_free, and tokens hold no memory of their own
** (text points into the source, decoded strings into the arena).  So a parse
** that fails halfway leaks nothing although the destructors free nothing.
*/

%name lang_lemon
%token_prefix TK_
%token_type { lang_token }
%default_type { ast * }
%extra_context { lang_pstate *st }
%start_symbol program
/* Deep enough for LANG_MAX_DEPTH levels of the most stack-hungry nesting
** (`a or b and c == d + e * f ** g(x, k=(...` uses ~18 entries per level);
** deeper input is refused with the same message as the nesting limit. */
%stack_size 5000

%include {
#include <assert.h>
#include <string.h>
#include "gk.h"
#include "lang/parse.h"
#define YYNOERRORRECOVERY 1   /* the first syntax error ends the parse */
/* parse.c allocates the parser itself (lang_lemon_size, lang_lemonInit), so
** no lang_lemonAlloc / lang_lemonFree is generated */
#define lang_lemon_ENGINEALWAYSONSTACK 1
}

%code {
/* Size of the parser object, so that parse.c can allocate it through the
** arena's allocation hook and call lang_lemonInit on it. */
size_t lang_lemon_size(void) { return sizeof(yyParser); }
}

%syntax_error { lang_syntax_error(st, yymajor, &yyminor); }
%stack_overflow {
  lang_error(st, GK_ELIMIT, st->cur.loc, "expression nested too deeply (limit %d)", LANG_MAX_DEPTH);
}

/* Token codes.  ORDER: lexer.re and tree.c use the TK_ names only. */
%token NEWLINE SEMI.
%token NAME ASSIGN FN LP RP COMMA.
%token OR AND NOT.
%token EQ NE LT LE GT GE.
%token PLUS MINUS STAR SLASH PERCENT AT POW.
%token LB RB COLON.
%token INT FLOAT STRING TRUE FALSE.

/* Empty destructors: see the file's header comment (arena-owned). */
%token_destructor { (void)$$; (void)st; }
%destructor program { (void)$$; }
%destructor items   { (void)$$; }
%destructor stmt    { (void)$$; }
%destructor expr    { (void)$$; }
%destructor andx    { (void)$$; }
%destructor notx    { (void)$$; }
%destructor cmp     { (void)$$; }
%destructor sum     { (void)$$; }
%destructor term    { (void)$$; }
%destructor unary   { (void)$$; }
%destructor power   { (void)$$; }
%destructor postfix { (void)$$; }
%destructor atom    { (void)$$; }
%destructor index   { (void)$$; }
%destructor oexpr   { (void)$$; }
%destructor params  { (void)$$; }
%destructor arglist { (void)$$; }
%destructor indices { (void)$$; }
%destructor elems   { (void)$$; }

%type sep { lang_token }
%type params { lang_seq * }
%type arglist { lang_seq * }
%type indices { lang_seq * }
%type elems { lang_seq * }

/* ---- program: statements separated by NEWLINE or ';' ------------------- */
program ::= items.
program ::= items stmt(S).            { lang_add_stmt(st, S, st->lex.len); }
items ::= .
items ::= items sep.
items ::= items stmt(S) sep(T).       { lang_add_stmt(st, S, (size_t)T.loc.offset + (size_t)T.len); }

sep(A) ::= NEWLINE(T).                { A = T; }
sep(A) ::= SEMI(T).                   { A = T; }

stmt(A) ::= NAME(N) ASSIGN expr(E).   { A = lang_mk_assign(st, &N, E); }
stmt(A) ::= FN(F) NAME(N) LP RP ASSIGN expr(E).            { A = lang_mk_fn(st, &F, &N, NULL, E); }
stmt(A) ::= FN(F) NAME(N) LP params(P) RP ASSIGN expr(E).  { A = lang_mk_fn(st, &F, &N, P, E); }
stmt(A) ::= FN(F) NAME(N) LP params(P) COMMA RP ASSIGN expr(E). { A = lang_mk_fn(st, &F, &N, P, E); }
stmt(A) ::= expr(E).                  { A = lang_mk_expr(st, E); }

params(A) ::= NAME(N).                { A = lang_seq_param(st, NULL, &N); }
params(A) ::= params(P) COMMA NAME(N). { A = lang_seq_param(st, P, &N); }

/* ---- the precedence ladder ---------------------------------------------- */
expr(A) ::= expr(L) OR(O) andx(R).    { A = lang_mk_binary(st, AST_OP_OR, &O, L, R); }
expr(A) ::= andx(X).                  { A = X; }
andx(A) ::= andx(L) AND(O) notx(R).   { A = lang_mk_binary(st, AST_OP_AND, &O, L, R); }
andx(A) ::= notx(X).                  { A = X; }
notx(A) ::= NOT(O) notx(X).           { A = lang_mk_unary(st, AST_OP_NOT, &O, X); }
notx(A) ::= cmp(X).                   { A = X; }
cmp(A) ::= sum(L) EQ(O) sum(R).       { A = lang_mk_binary(st, AST_OP_EQ, &O, L, R); }
cmp(A) ::= sum(L) NE(O) sum(R).       { A = lang_mk_binary(st, AST_OP_NE, &O, L, R); }
cmp(A) ::= sum(L) LT(O) sum(R).       { A = lang_mk_binary(st, AST_OP_LT, &O, L, R); }
cmp(A) ::= sum(L) LE(O) sum(R).       { A = lang_mk_binary(st, AST_OP_LE, &O, L, R); }
cmp(A) ::= sum(L) GT(O) sum(R).       { A = lang_mk_binary(st, AST_OP_GT, &O, L, R); }
cmp(A) ::= sum(L) GE(O) sum(R).       { A = lang_mk_binary(st, AST_OP_GE, &O, L, R); }
cmp(A) ::= sum(X).                    { A = X; }
sum(A) ::= sum(L) PLUS(O) term(R).    { A = lang_mk_binary(st, AST_OP_ADD, &O, L, R); }
sum(A) ::= sum(L) MINUS(O) term(R).   { A = lang_mk_binary(st, AST_OP_SUB, &O, L, R); }
sum(A) ::= term(X).                   { A = X; }
term(A) ::= term(L) STAR(O) unary(R).    { A = lang_mk_binary(st, AST_OP_MUL, &O, L, R); }
term(A) ::= term(L) SLASH(O) unary(R).   { A = lang_mk_binary(st, AST_OP_DIV, &O, L, R); }
term(A) ::= term(L) PERCENT(O) unary(R). { A = lang_mk_binary(st, AST_OP_MOD, &O, L, R); }
term(A) ::= term(L) AT(O) unary(R).      { A = lang_mk_binary(st, AST_OP_MATMUL, &O, L, R); }
/* Every operand passes through here or through a binary/call/index builder
** (which call lang_use); a unary minus in between may still claim a 2^63. */
term(A) ::= unary(X).                 { A = lang_use(st, X); }
unary(A) ::= MINUS(O) unary(X).       { A = lang_mk_neg(st, &O, X); }
unary(A) ::= power(X).                { A = X; }
power(A) ::= postfix(L) POW(O) unary(R). { A = lang_mk_binary(st, AST_OP_POW, &O, L, R); }
power(A) ::= postfix(X).              { A = X; }

postfix(A) ::= NAME(N) LP RP.                   { A = lang_mk_call(st, &N, NULL); }
postfix(A) ::= NAME(N) LP arglist(S) RP.        { A = lang_mk_call(st, &N, S); }
postfix(A) ::= NAME(N) LP arglist(S) COMMA RP.  { A = lang_mk_call(st, &N, S); }
postfix(A) ::= postfix(T) LB(B) indices(S) RB.  { A = lang_mk_index(st, T, &B, S); }
postfix(A) ::= atom(X).               { A = X; }

arglist(A) ::= expr(X).                               { A = lang_seq_arg(st, NULL, NULL, X); }
arglist(A) ::= NAME(K) ASSIGN expr(X).                { A = lang_seq_arg(st, NULL, &K, X); }
arglist(A) ::= arglist(S) COMMA expr(X).              { A = lang_seq_arg(st, S, NULL, X); }
arglist(A) ::= arglist(S) COMMA NAME(K) ASSIGN expr(X). { A = lang_seq_arg(st, S, &K, X); }

indices(A) ::= index(X).                  { A = lang_seq_add(st, NULL, X, "indices"); }
indices(A) ::= indices(S) COMMA index(X). { A = lang_seq_add(st, S, X, "indices"); }
index(A) ::= expr(X).                     { A = X; }
index(A) ::= oexpr(L) COLON(C) oexpr(R).  { A = lang_mk_slice(st, &C, L, R, NULL); }
index(A) ::= oexpr(L) COLON(C) oexpr(R) COLON oexpr(S). { A = lang_mk_slice(st, &C, L, R, S); }
oexpr(A) ::= .                            { A = NULL; }
oexpr(A) ::= expr(X).                     { A = X; }

atom(A) ::= INT(T).                   { A = lang_mk_int(st, &T); }
atom(A) ::= FLOAT(T).                 { A = lang_mk_float(st, &T); }
atom(A) ::= STRING(T).                { A = lang_mk_str(st, &T); }
atom(A) ::= TRUE(T).                  { A = lang_mk_bool(st, &T, 1); }
atom(A) ::= FALSE(T).                 { A = lang_mk_bool(st, &T, 0); }
atom(A) ::= NAME(T).                  { A = lang_mk_name(st, &T); }
atom(A) ::= LP(P) expr(X) RP.         { A = lang_mk_paren(st, &P, X); }
atom(A) ::= LB(B) RB.                 { A = lang_mk_list(st, &B, NULL); }
atom(A) ::= LB(B) elems(S) RB.        { A = lang_mk_list(st, &B, S); }
atom(A) ::= LB(B) elems(S) COMMA RB.  { A = lang_mk_list(st, &B, S); }

elems(A) ::= expr(X).                 { A = lang_seq_add(st, NULL, X, "list elements"); }
elems(A) ::= elems(S) COMMA expr(X).  { A = lang_seq_add(st, S, X, "list elements"); }
