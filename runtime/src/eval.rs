//! The interpreter: runs the resolved, typed code of actions and functions
//! (`jadpo_compiler::ir::code`). Statements and expressions mean what the
//! language design says; everything that reaches outside the code (outside
//! calls, the store, staged follow-ups, config and the clock) goes through
//! [`Effects`], which the attempt implements with the step rules.
//!
//! Control leaves an expression as a [`Flow`]: a failure passed on (caught
//! by `match`, or ending the action), a `return`, or a [`Stop`] that ends
//! the attempt whatever the code does (retry later, park, hold, fault).

use std::sync::Arc;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::code::{
    Arm, ArmPattern, BinOp, Body, Emit, Expr, ExprKind, Fallible, OptionCode, Query, Reject, Stmt,
    StmtKind, Write,
};
use jadpo_compiler::ir::test::Count;
use jadpo_compiler::ir::{ActionId, FailureId, FailureKind, OpId, Program, Ty, Types};
use jadpo_compiler::span::Span;
use rust_decimal::Decimal;

use crate::check::check_value;
use crate::value::{Instant, Record, Value};

/// A failure on its way out: which, and its fields (a record, or `Unit`).
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    pub failure: FailureId,
    pub fields: Value,
}

/// Why an attempt stops before the action ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// Ends the attempt; a later attempt goes on (a transient failure, a
    /// step in doubt, "key in use", a commit conflict).
    RetryLater(String),
    /// The step's outcome cannot be known: parked for an operator.
    Park { step: u32, why: String },
    /// Held for an operator: the code no longer matches the record.
    Held(Divergence),
    /// A constraint broken at run time, or a limit passed.
    Fault(String),
    /// A crash at a crash point (tests): the attempt ends; the delivery
    /// resumes at once.
    Crash,
    /// Another runner took the lease: this one stops.
    LeaseLost,
}

/// What differs between the code and the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub step: u32,
    pub operation: String,
    pub why: String,
    /// The top-level request fields that differ, when the operation is the
    /// same.
    pub fields: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Flow {
    Fail(Failed),
    Return(Value),
    Stop(Stop),
}

pub type R<T> = Result<T, Flow>;

pub fn fault<T>(message: impl Into<String>) -> R<T> {
    Err(Flow::Stop(Stop::Fault(message.into())))
}

/// A store read: its entity, its conditions and how many rows it may give.
pub struct Read<'a> {
    pub query: &'a Query,
    pub filter: Vec<(Name, Value)>,
}

/// A write with its values computed.
pub enum WriteValues<'a> {
    Create {
        write: &'a Write,
        row: Value,
    },
    Update {
        write: &'a Write,
        filter: Vec<(Name, Value)>,
        set: Vec<(Name, Value)>,
    },
    Delete {
        write: &'a Write,
        filter: Vec<(Name, Value)>,
    },
}

/// What the code reaches outside itself.
pub trait Effects {
    /// An outside call. `via` are the action calls leading to it (their
    /// call sites, outermost first).
    fn call_op(&mut self, op: OpId, request: Value, site: Span, via: &[Span]) -> R<Value>;
    fn write(&mut self, program: &Program, w: WriteValues<'_>) -> R<Value>;
    fn read(&mut self, program: &Program, read: Read<'_>) -> R<Value>;
    fn emit(&mut self, program: &Program, emit: &Emit, payload: Value, options: Value) -> R<()>;
    fn config(&self, name: Name) -> R<Value>;
    fn now(&self) -> Instant;
    /// `stored E`, `sent pkg.op`, `emitted Ev`: only a test's statements
    /// count.
    fn count(&self, _count: Count) -> R<Value> {
        fault("`stored`, `sent` and `emitted` count only in a test")
    }
}

/// How deep actions and functions may call each other.
pub const MAX_CALL_DEPTH: u32 = 256;

/// How deep evaluation may nest: expressions, blocks and calls counted
/// together. A statement may nest 1,024 levels (the parser's bound) and
/// calls 256, but together they multiply; this bound keeps the
/// interpreter inside the stack of the threads it runs on (256 MiB for a
/// test, the server's blocking threads likewise) in any build.
pub const MAX_NESTING: u32 = 32_768;

/// The bytes of text the code may compute in one run (a test's run, a
/// delivery's attempt): concatenations and `Text(x)`. A program that
/// doubles a text 32 times faults instead of taking the machine's memory.
pub const MAX_COMPUTED_BYTES: u64 = 256 << 20;

/// How often, in evaluation steps, the deadline is looked at.
const DEADLINE_EVERY: u64 = 4096;

/// What one evaluation may spend: steps, bytes of computed text, and
/// time. Each is a fault when it runs out, never a crash or a hang.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Expressions left to evaluate.
    pub fuel: u64,
    /// Bytes of computed text left.
    pub bytes: u64,
    /// When evaluation must stop (a test's time limit).
    pub deadline: Option<std::time::Instant>,
}

impl Budget {
    /// `fuel` steps, [`MAX_COMPUTED_BYTES`] and no deadline.
    pub const fn steps(fuel: u64) -> Budget {
        Budget {
            fuel,
            bytes: MAX_COMPUTED_BYTES,
            deadline: None,
        }
    }

    /// Whether the deadline has passed.
    pub fn over_time(&self) -> bool {
        self.deadline.is_some_and(|d| std::time::Instant::now() > d)
    }
}

pub struct Interp<'p, E> {
    pub program: &'p Program,
    pub fx: E,
    via: Vec<Span>,
    depth: u32,
    /// Evaluations in progress, one inside another.
    nesting: u32,
    /// What is left to spend.
    pub budget: Budget,
}

struct Frame {
    locals: Vec<Value>,
}

impl Frame {
    fn new(body: &Body, args: Vec<Value>) -> Frame {
        let mut locals = args;
        locals.resize(body.locals.max(locals.len() as u32) as usize, Value::Unit);
        Frame { locals }
    }

    fn get(&self, slot: u32) -> Value {
        self.locals
            .get(slot as usize)
            .cloned()
            .unwrap_or(Value::Unit)
    }

    fn set(&mut self, slot: u32, v: Value) {
        if let Some(s) = self.locals.get_mut(slot as usize) {
            *s = v;
        }
    }
}

impl<'p, E: Effects> Interp<'p, E> {
    pub fn new(program: &'p Program, fx: E, budget: Budget) -> Self {
        Interp {
            program,
            fx,
            via: Vec::new(),
            depth: 0,
            nesting: 0,
            budget,
        }
    }

    fn types(&self) -> Types<'p> {
        self.program.type_table()
    }

    /// Runs an action to its end: its answer, or the failure or stop that
    /// ended it.
    pub fn run(&mut self, action: ActionId, args: Vec<Value>) -> R<Value> {
        let a = self.program.action(action);
        self.depth += 1;
        if self.depth > MAX_CALL_DEPTH {
            return fault(format!(
                "actions and functions call each other more than {MAX_CALL_DEPTH} deep (in `{}`)",
                a.qualified
            ));
        }
        let mut frame = Frame::new(&a.code, args);
        let out = match self.block(&mut frame, &a.code.stmts) {
            Ok(()) => Ok(Value::Unit),
            Err(Flow::Return(v)) => Ok(v),
            Err(other) => Err(other),
        };
        self.depth -= 1;
        out
    }

    fn function(&mut self, f: jadpo_compiler::ir::FnId, args: Vec<Value>) -> R<Value> {
        let func = self.program.function(f);
        self.depth += 1;
        if self.depth > MAX_CALL_DEPTH {
            return fault(format!(
                "functions call each other more than {MAX_CALL_DEPTH} deep (in `{}`)",
                func.name
            ));
        }
        let mut frame = Frame::new(&func.code, args);
        let out = match self.block(&mut frame, &func.code.stmts) {
            Ok(()) => Ok(Value::Unit),
            Err(Flow::Return(v)) => Ok(v),
            Err(Flow::Fail(_)) => fault(format!("function `{}` failed", func.name)),
            Err(stop) => Err(stop),
        };
        self.depth -= 1;
        out
    }

    fn block(&mut self, frame: &mut Frame, stmts: &[Stmt]) -> R<()> {
        self.enter()?;
        let out = stmts.iter().try_for_each(|s| self.stmt(frame, s));
        self.nesting -= 1;
        out
    }

    /// One level of evaluation deeper, or a fault past [`MAX_NESTING`].
    fn enter(&mut self) -> R<()> {
        if self.nesting >= MAX_NESTING {
            return fault(format!(
                "evaluation nests more than {MAX_NESTING} levels deep (deep expressions inside deep calls)"
            ));
        }
        self.nesting += 1;
        Ok(())
    }

    /// Spends `bytes` of computed text, before it is allocated.
    fn charge(&mut self, bytes: usize) -> R<()> {
        let bytes = bytes as u64;
        if bytes > self.budget.bytes {
            return fault(format!(
                "the code computed more than {} MiB of text (a text that keeps doubling?)",
                MAX_COMPUTED_BYTES >> 20
            ));
        }
        self.budget.bytes -= bytes;
        Ok(())
    }

    fn stmt(&mut self, frame: &mut Frame, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Set(slot, e) => {
                let v = self.eval(frame, e)?;
                frame.set(slot.0, v);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let taken = self.eval(frame, cond)? == Value::Bool(true);
                let branch = if taken { then_block } else { else_block };
                self.block(frame, branch)?;
            }
            StmtKind::For {
                item,
                items,
                max,
                body,
            } => {
                let Value::List(list) = self.eval(frame, items)? else {
                    return fault("`for` over a value that is not a list");
                };
                let limit = max.map_or(list.len(), |m| list.len().min(m as usize));
                for v in list.iter().take(limit) {
                    frame.set(item.0, v.clone());
                    self.block(frame, body)?;
                }
            }
            StmtKind::Return(value) => {
                let v = match value {
                    Some(e) => self.eval(frame, e)?,
                    None => Value::Unit,
                };
                return Err(Flow::Return(v));
            }
            StmtKind::Reject(r) => return Err(Flow::Fail(self.reject(frame, r)?)),
            StmtKind::Emit(e) => self.emit(frame, e)?,
            StmtKind::Expr(e) => {
                self.eval(frame, e)?;
            }
        }
        Ok(())
    }

    fn reject(&mut self, frame: &mut Frame, r: &Reject) -> R<Failed> {
        let fields = self.fields(frame, &r.fields)?;
        let fields = if fields.is_empty() {
            Value::Unit
        } else {
            Value::record(fields)
        };
        Ok(Failed {
            failure: r.failure,
            fields,
        })
    }

    fn fields(&mut self, frame: &mut Frame, fields: &[(Name, Expr)]) -> R<Vec<(Name, Value)>> {
        let mut out = Vec::with_capacity(fields.len());
        for (name, e) in fields {
            out.push((*name, self.eval(frame, e)?));
        }
        Ok(out)
    }

    fn emit(&mut self, frame: &mut Frame, e: &Emit) -> R<()> {
        let payload = Value::record(self.fields(frame, &e.fields)?);
        let options = self.options(frame, &e.options)?;
        self.fx.emit(self.program, e, payload, options)
    }

    fn options(&mut self, frame: &mut Frame, options: &[(Name, OptionCode)]) -> R<Value> {
        let mut out = Vec::with_capacity(options.len());
        for (name, code) in options {
            let v = match code {
                OptionCode::Expr(e) => self.eval(frame, e)?,
                OptionCode::Record(inner) => self.options(frame, inner)?,
            };
            out.push((*name, v));
        }
        Ok(Value::record(out))
    }

    fn burn(&mut self) -> R<()> {
        if self.budget.fuel == 0 {
            return fault("the delivery ran out of its evaluation budget (a loop or recursion that does not end?)");
        }
        self.budget.fuel -= 1;
        if self.budget.fuel.is_multiple_of(DEADLINE_EVERY) && self.budget.over_time() {
            return fault("the time limit passed while the code ran");
        }
        Ok(())
    }

    fn eval(&mut self, frame: &mut Frame, e: &Expr) -> R<Value> {
        self.burn()?;
        self.enter()?;
        let out = self.eval_kind(frame, e);
        self.nesting -= 1;
        out
    }

    fn eval_kind(&mut self, frame: &mut Frame, e: &Expr) -> R<Value> {
        Ok(match &e.kind {
            ExprKind::Unit => Value::Unit,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(n) => Value::Int(*n),
            ExprKind::Decimal(d) => match d.parse::<Decimal>() {
                Ok(d) => Value::Decimal(d),
                Err(_) => return fault(format!("`{d}` is not a decimal Jadpo can hold")),
            },
            ExprKind::Text(t) => Value::Text(t.clone()),
            ExprKind::Duration(ms) => Value::Duration(*ms),
            ExprKind::None => Value::None,
            ExprKind::Local(slot) => frame.get(slot.0),
            ExprKind::Config(name) => self.fx.config(*name)?,
            ExprKind::ClockNow => Value::Instant(self.fx.now()),
            ExprKind::Variant(_, name) => Value::Enum(*name),
            ExprKind::Field(base, names) => {
                let mut v = self.eval(frame, base)?;
                for name in names {
                    v = match &v {
                        Value::Record(r) => r.get(*name),
                        _ => return fault(format!("`.{name}` of a value that is not a record")),
                    };
                }
                v
            }
            ExprKind::Construct { ty, fields } => {
                let values = self.fields(frame, fields)?;
                self.construct(*ty, values, e.span)?
            }
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(frame, i)?);
                }
                Value::List(out.into())
            }
            ExprKind::Not(inner) => Value::Bool(self.eval(frame, inner)? != Value::Bool(true)),
            ExprKind::Neg(inner) => negate(self.eval(frame, inner)?)?,
            ExprKind::Binary(op, l, r) => self.binary(frame, *op, l, r)?,
            ExprKind::Function(f, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(frame, a)?);
                }
                self.function(*f, values)?
            }
            ExprKind::TextOf(inner) => {
                let text = self.eval(frame, inner)?.as_text();
                self.charge(text.len())?;
                Value::text(&text)
            }
            ExprKind::Validate { value, .. } => self.eval(frame, value)?,
            ExprKind::Query(q) => self.query(frame, q)?,
            ExprKind::Count(c) => self.fx.count(*c)?,
            ExprKind::Fallible(f) => self.fallible(frame, f)?,
            ExprKind::Attempt(inner) => self.eval(frame, inner)?,
            ExprKind::Match { scrutinee, arms } => self.match_expr(frame, scrutinee, arms)?,
            ExprKind::Block(stmts) => {
                self.block(frame, stmts)?;
                Value::Unit
            }
            ExprKind::Reject(r) => return Err(Flow::Fail(self.reject(frame, r)?)),
            ExprKind::Propagate => return fault("`propagate` outside a match arm"),
            ExprKind::Error => return fault("code that did not check was run"),
        })
    }

    /// `Type { fields }`: each field's value is checked against the field's
    /// declared type (a computed text in a `Text { max_length: 64 }`).
    fn construct(
        &self,
        ty: jadpo_compiler::ir::TypeId,
        values: Vec<(Name, Value)>,
        at: Span,
    ) -> R<Value> {
        let types = self.types();
        let named = Ty::Named(ty);
        if let Some((_, defs)) = types.record(&named) {
            for (name, v) in &values {
                let Some(def) = defs.iter().find(|d| d.name == *name) else {
                    continue;
                };
                if let Err(problem) = check_value(types, &def.ty, v) {
                    let owner = self.program.type_name(&named);
                    return fault(format!(
                        "`{owner}.{name}` cannot hold this value: {problem} (at byte {})",
                        at.start
                    ));
                }
            }
        }
        Ok(Value::record(values))
    }

    fn binary(&mut self, frame: &mut Frame, op: BinOp, l: &Expr, r: &Expr) -> R<Value> {
        match op {
            BinOp::And => {
                if self.eval(frame, l)? != Value::Bool(true) {
                    return Ok(Value::Bool(false));
                }
                Ok(Value::Bool(self.eval(frame, r)? == Value::Bool(true)))
            }
            BinOp::Or => {
                if self.eval(frame, l)? == Value::Bool(true) {
                    return Ok(Value::Bool(true));
                }
                Ok(Value::Bool(self.eval(frame, r)? == Value::Bool(true)))
            }
            _ => {
                let a = self.eval(frame, l)?;
                let b = self.eval(frame, r)?;
                if let (BinOp::Add, Value::Text(x), Value::Text(y)) = (op, &a, &b) {
                    self.charge(x.len() + y.len())?;
                }
                crate::arith::binary(op, &a, &b)
            }
        }
    }

    fn match_expr(&mut self, frame: &mut Frame, scrutinee: &Expr, arms: &[Arm]) -> R<Value> {
        let outcome = self.eval(frame, scrutinee);
        match outcome {
            Ok(v) => {
                let Some(arm) = arms
                    .iter()
                    .find(|a| matches!(a.pattern, ArmPattern::Success(_)))
                else {
                    return Ok(v);
                };
                if let ArmPattern::Success(slot) = arm.pattern {
                    frame.set(slot.0, v);
                }
                self.arm(frame, arm, None)
            }
            Err(Flow::Fail(failed)) => {
                match arms
                    .iter()
                    .find(|a| a.pattern == ArmPattern::Failure(failed.failure))
                {
                    Some(arm) => self.arm(frame, arm, Some(failed)),
                    None => Err(Flow::Fail(failed)),
                }
            }
            Err(other) => Err(other),
        }
    }

    fn arm(&mut self, frame: &mut Frame, arm: &Arm, failed: Option<Failed>) -> R<Value> {
        if let (ExprKind::Propagate, Some(f)) = (&arm.body.kind, failed) {
            return Err(Flow::Fail(f));
        }
        self.eval(frame, &arm.body)
    }

    fn fallible(&mut self, frame: &mut Frame, f: &Fallible) -> R<Value> {
        match f {
            Fallible::Op { op, request, site } => {
                let request = self.eval(frame, request)?;
                self.fx.call_op(*op, request, *site, &self.via)
            }
            Fallible::Action { action, args, site } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(frame, a)?);
                }
                self.via.push(*site);
                let out = self.run(*action, values);
                self.via.pop();
                out
            }
            Fallible::Write(w) => {
                let values = self.write_values(frame, w)?;
                self.fx.write(self.program, values)
            }
            Fallible::Query(q) => self.query(frame, q),
            Fallible::Validate { ty, value } => {
                let v = self.eval(frame, value)?;
                match check_value(self.types(), ty, &v) {
                    Ok(()) => Ok(v),
                    Err(_) => Err(Flow::Fail(Failed {
                        failure: self.program.standard_failure(FailureKind::InvalidValue),
                        fields: Value::Unit,
                    })),
                }
            }
        }
    }

    fn write_values<'w>(&mut self, frame: &mut Frame, w: &'w Write) -> R<WriteValues<'w>> {
        Ok(match w {
            Write::Create { entity, fields, .. } => {
                let values = self.fields(frame, fields)?;
                let ty = self.program.entity(*entity).ty;
                let row = self.construct(ty, values, Span::default())?;
                WriteValues::Create { write: w, row }
            }
            Write::Update { filter, set, .. } => WriteValues::Update {
                write: w,
                filter: self.fields(frame, filter)?,
                set: self.fields(frame, set)?,
            },
            Write::Delete { filter, .. } => WriteValues::Delete {
                write: w,
                filter: self.fields(frame, filter)?,
            },
        })
    }

    fn query(&mut self, frame: &mut Frame, q: &Query) -> R<Value> {
        let filter = self.fields(frame, &q.filter)?;
        self.fx.read(self.program, Read { query: q, filter })
    }
}

fn negate(v: Value) -> R<Value> {
    Ok(match v {
        Value::Int(n) => match n.checked_neg() {
            Some(n) => Value::Int(n),
            None => return fault("`-` of the smallest Int overflows"),
        },
        Value::Decimal(d) => Value::Decimal(-d),
        Value::Duration(ms) => Value::Duration(-ms),
        other => return fault(format!("`-` of {other:?}")),
    })
}

/// A record value from its fields (for callers building requests).
pub fn record(fields: Vec<(Name, Value)>) -> Value {
    Value::Record(Arc::new(Record::new(fields)))
}

impl<T: Effects + ?Sized> Effects for &mut T {
    fn call_op(&mut self, op: OpId, request: Value, site: Span, via: &[Span]) -> R<Value> {
        (**self).call_op(op, request, site, via)
    }
    fn write(&mut self, program: &Program, w: WriteValues<'_>) -> R<Value> {
        (**self).write(program, w)
    }
    fn read(&mut self, program: &Program, read: Read<'_>) -> R<Value> {
        (**self).read(program, read)
    }
    fn emit(&mut self, program: &Program, emit: &Emit, payload: Value, options: Value) -> R<()> {
        (**self).emit(program, emit, payload, options)
    }
    fn config(&self, name: Name) -> R<Value> {
        (**self).config(name)
    }
    fn now(&self) -> Instant {
        (**self).now()
    }
    fn count(&self, count: Count) -> R<Value> {
        (**self).count(count)
    }
}

/// Effects for code that may have none: an entry point's `run:` arguments.
struct NoEffects;

impl Effects for NoEffects {
    fn call_op(&mut self, _: OpId, _: Value, _: Span, _: &[Span]) -> R<Value> {
        fault("an outside call in an entry point's `run:`")
    }
    fn write(&mut self, _: &Program, _: WriteValues<'_>) -> R<Value> {
        fault("a write in an entry point's `run:`")
    }
    fn read(&mut self, _: &Program, _: Read<'_>) -> R<Value> {
        fault("a store read in an entry point's `run:`")
    }
    fn emit(&mut self, _: &Program, _: &Emit, _: Value, _: Value) -> R<()> {
        fault("an emit in an entry point's `run:`")
    }
    fn config(&self, name: Name) -> R<Value> {
        fault(format!("`config.{name}` in an entry point's `run:`"))
    }
    fn now(&self) -> Instant {
        Instant(0)
    }
}

/// Evaluates one expression over caller-held locals (a test's `var`s)
/// within `budget`, which is left with what remains.
pub fn eval_over<E: Effects>(
    program: &Program,
    fx: E,
    locals: &mut Vec<Value>,
    e: &Expr,
    budget: &mut Budget,
) -> R<Value> {
    let mut interp = Interp::new(program, fx, *budget);
    let mut frame = Frame {
        locals: std::mem::take(locals),
    };
    let out = interp.eval(&mut frame, e);
    *locals = frame.locals;
    *budget = interp.budget;
    out
}

/// Evaluates an entry point's `run:` arguments over the entry's values
/// (its first locals).
pub fn eval_args(
    program: &Program,
    args: &[Expr],
    values: Vec<Value>,
) -> Result<Vec<Value>, String> {
    let mut interp = Interp::new(program, NoEffects, Budget::steps(1_000_000));
    let mut frame = Frame { locals: values };
    frame.locals.resize(frame.locals.len().max(4), Value::Unit);
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        match interp.eval(&mut frame, a) {
            Ok(v) => out.push(v),
            Err(Flow::Stop(Stop::Fault(why))) => return Err(why),
            Err(other) => return Err(format!("{other:?}")),
        }
    }
    Ok(out)
}
