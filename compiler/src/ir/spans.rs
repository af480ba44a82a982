//! Every span the IR and a diagnostic hold, visited by one walk. Each
//! implementation destructures its value without `..`: a new field does
//! not compile until this walk says what it holds, so a new span cannot be
//! missed by the three readers: the resolver's relocation after an edit
//! (`resolve/relocate.rs`, which must move every span of an edited file),
//! the files a checked body points into (`resolve/patch.rs`), and the
//! invariants test (every span lies inside its file).

use crate::diag::{Diagnostic, Edit, Fix, Label};
use crate::span::{FileId, Span};

use super::code;
use super::test;
use super::*;

/// What holds spans: each is given to `f`, in a fixed order.
pub trait Spans {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span));
}

/// The spans of `value`, read (on a copy when the value is shared).
pub fn spans_of<T: Spans>(value: &mut T) -> Vec<Span> {
    let mut out = Vec::new();
    value.spans_mut(&mut |s| out.push(*s));
    out
}

impl Spans for Span {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        f(self);
    }
}

impl<T: Spans + ?Sized> Spans for &mut T {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        (**self).spans_mut(f);
    }
}

impl<T: Spans> Spans for Option<T> {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        if let Some(v) = self {
            v.spans_mut(f);
        }
    }
}

impl<T: Spans> Spans for Vec<T> {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        for v in self {
            v.spans_mut(f);
        }
    }
}

impl<T: Spans> Spans for Box<T> {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        (**self).spans_mut(f);
    }
}

impl<I, T: Spans> Spans for IndexVec<I, T> {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        for v in self.iter_mut() {
            v.spans_mut(f);
        }
    }
}

impl<A: Spans, B: Spans> Spans for (A, B) {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        self.0.spans_mut(f);
        self.1.spans_mut(f);
    }
}

impl<A: Spans, B: Spans, C: Spans> Spans for (A, B, C) {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        self.0.spans_mut(f);
        self.1.spans_mut(f);
        self.2.spans_mut(f);
    }
}

/// Values that hold no span (ids, names): nothing to visit.
macro_rules! no_spans {
    ($($t:ty),* $(,)?) => {
        $(impl Spans for $t {
            fn spans_mut(&mut self, _: &mut dyn FnMut(&mut Span)) {}
        })*
    };
}

no_spans!(FailureId, crate::intern::Name, ());

impl Spans for Diagnostic {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Diagnostic {
            code: _,
            severity: _,
            summary: _,
            span,
            label: _,
            related,
            reason: _,
            fixes,
            help: _,
        } = self;
        f(span);
        for Label { span, message: _ } in related {
            f(span);
        }
        for Fix { message: _, edits } in fixes {
            for Edit {
                span,
                replacement: _,
            } in edits
            {
                f(span);
            }
        }
    }
}

impl Diagnostic {
    /// Every span the diagnostic holds: its own, its labels', its fixes'.
    pub fn spans(&self) -> Vec<Span> {
        spans_of(&mut self.clone())
    }
}

impl Program {
    /// Every span outside action bodies, of the items whose own file
    /// `item_file` admits (an item's spans outside bodies lie in its own
    /// file; an item with no file of its own, a route's path type or the
    /// application's settings, is always visited).
    pub fn spans_outside_bodies(
        &mut self,
        item_file: impl Fn(FileId) -> bool + Copy,
        f: &mut dyn FnMut(&mut Span),
    ) {
        let Program {
            app,
            packages,
            operations,
            actions,
            failures,
            events,
            entities,
            entries,
            types,
            functions,
            config,
            fixtures,
            tests,
            context: _,
        } = self;
        app.spans_mut(f);
        packages.spans_mut(f);
        operations.spans_mut(f);
        for a in actions.iter_mut().filter(|a| item_file(a.span.file)) {
            a.header_spans_mut(f);
        }
        for x in failures.iter_mut() {
            if x.span.is_none_or(|s| item_file(s.file)) {
                x.spans_mut(f);
            }
        }
        visit_own(events.iter_mut(), |e| e.span.file, item_file, f);
        visit_own(entities.iter_mut(), |e| e.span.file, item_file, f);
        visit_own(entries.iter_mut(), |e| e.span.file, item_file, f);
        for t in types.iter_mut() {
            if t.span.is_none_or(|s| item_file(s.file)) {
                t.spans_mut(f);
            }
        }
        visit_own(functions.iter_mut(), |x| x.span.file, item_file, f);
        visit_own(config.iter_mut(), |c| c.span.file, item_file, f);
        visit_own(fixtures.iter_mut(), |x| x.span.file, item_file, f);
        visit_own(tests.iter_mut(), |t| t.span.file, item_file, f);
    }
}

/// Visits the items whose own file (`file`) `item_file` admits.
fn visit_own<'i, T: Spans + 'i>(
    items: impl Iterator<Item = &'i mut T>,
    file: impl Fn(&T) -> FileId,
    item_file: impl Fn(FileId) -> bool,
    f: &mut dyn FnMut(&mut Span),
) {
    for item in items {
        if item_file(file(item)) {
            item.spans_mut(f);
        }
    }
}

impl Spans for Program {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        self.spans_outside_bodies(|_| true, f);
        for a in self.actions.iter_mut() {
            a.body_spans_mut(f);
        }
    }
}

impl Spans for AppSettings {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let AppSettings {
            name: _,
            span,
            events_store,
            encryption_key,
            providers,
        } = self;
        span.spans_mut(f);
        events_store.spans_mut(f);
        if let Some(EncryptionKey {
            span,
            name: _,
            secret: _,
            config_span,
        }) = encryption_key
        {
            f(span);
            config_span.spans_mut(f);
        }
        for ProviderSettings {
            package: _,
            span,
            given,
        } in providers
        {
            f(span);
            for ProviderSetting {
                name: _,
                config: _,
                span,
            } in given
            {
                f(span);
            }
        }
    }
}

impl Spans for Package {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Package {
            name: _,
            version: _,
            manifest_span,
            idempotency: _,
            timeout_ms: _,
            attempts: _,
            http: _,
            has_errors: _,
        } = self;
        f(manifest_span);
    }
}

impl Spans for Operation {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Operation {
            package: _,
            name: _,
            qualified: _,
            span,
            changes: _,
            idempotent: _,
            keyed: _,
            failures: _,
            already_undone: _,
            large_output: _,
            timeout_ms: _,
            attempts: _,
            window_ms: _,
            check: _,
            request: _,
            answer: _,
            http: _,
        } = self;
        f(span);
    }
}

impl Action {
    /// The spans of the action's declaration outside its body.
    pub fn header_spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Action {
            owner: _,
            name: _,
            qualified: _,
            public: _,
            span,
            name_span,
            fails,
            declines,
            // Visited by `body_spans_mut`.
            body: _,
            revision: _,
            params: _,
            ret: _,
            code: _,
            reads: _,
        } = self;
        f(span);
        f(name_span);
        fails.spans_mut(f);
        for Decline {
            code: _,
            reason: _,
            span,
        } in declines
        {
            f(span);
        }
    }

    /// The spans of the action's body: its effect tree and its code.
    pub fn body_spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        self.body.spans_mut(f);
        self.code.spans_mut(f);
    }
}

impl Spans for Failure {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Failure {
            owner: _,
            qualified: _,
            kind: _,
            span,
            code: _,
            fields,
        } = self;
        span.spans_mut(f);
        fields.spans_mut(f);
    }
}

impl Spans for FieldDef {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let FieldDef {
            name: _,
            ty: _,
            optional: _,
            span,
        } = self;
        f(span);
    }
}

impl Spans for TypeDef {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let TypeDef {
            owner: _,
            name: _,
            kind,
            span,
        } = self;
        span.spans_mut(f);
        match kind {
            TypeKind::Record(fields) => fields.spans_mut(f),
            TypeKind::Pending | TypeKind::Alias(_) | TypeKind::Enum(_) => {}
        }
    }
}

impl Spans for Event {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Event {
            owner: _,
            qualified: _,
            fields,
            span,
            ty: _,
        } = self;
        f(span);
        for EventField {
            name: _,
            max_json_bytes: _,
            span,
        } in fields
        {
            f(span);
        }
    }
}

impl Spans for Entity {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Entity {
            owner: _,
            qualified: _,
            store: _,
            span,
            ty: _,
        } = self;
        f(span);
    }
}

impl Spans for ConfigEntry {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let ConfigEntry {
            name: _,
            ty: _,
            secret: _,
            binding: _,
            default: _,
            span,
        } = self;
        f(span);
    }
}

impl Spans for Entry {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Entry {
            kind,
            label: _,
            span,
            run_span,
            action: _,
            run_args,
        } = self;
        f(span);
        f(run_span);
        match kind {
            EntryKind::Route {
                method: _,
                path: _,
                key_required: _,
                key_span,
                deadline_ms: _,
                deadline_span,
                auth_required: _,
                input: _,
                path_values: _,
                output: _,
            } => {
                key_span.spans_mut(f);
                deadline_span.spans_mut(f);
            }
            EntryKind::Subscriber { event: _ } | EntryKind::Schedule { every_ms: _ } => {}
        }
        run_args.spans_mut(f);
    }
}

impl Spans for Block {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Block { nodes } = self;
        nodes.spans_mut(f);
    }
}

impl Spans for Node {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            Node::Effect(Effect {
                span,
                target,
                handling,
            }) => {
                f(span);
                match target {
                    Target::Write(Write {
                        kind: _,
                        entity: _,
                        failures,
                        keyed_by_input: _,
                        read_first: _,
                    }) => failures.spans_mut(f),
                    Target::Op(_) | Target::Action(_) | Target::Check(_) => {}
                }
                match handling {
                    Handling::Attempt(span) => f(span),
                    Handling::Match(arms) => arms.spans_mut(f),
                    Handling::Unhandled => {}
                }
            }
            Node::Emit(emit) => emit.spans_mut(f),
            Node::Reject(reject) => reject.spans_mut(f),
            Node::Return(span) => f(span),
            Node::If {
                span,
                then_block,
                else_block,
            } => {
                f(span);
                then_block.spans_mut(f);
                else_block.spans_mut(f);
            }
            Node::Loop {
                span,
                head,
                max: _,
                body,
            } => {
                f(span);
                f(head);
                body.spans_mut(f);
            }
        }
    }
}

impl Spans for Arm {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Arm {
            span,
            pattern: _,
            body,
            end,
        } = self;
        f(span);
        body.spans_mut(f);
        match end {
            ArmEnd::Value => {}
            ArmEnd::Reject(reject) => reject.spans_mut(f),
            ArmEnd::Propagate(span) => f(span),
        }
    }
}

impl Spans for Reject {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Reject { span, failure: _ } = self;
        f(span);
    }
}

impl Spans for Emit {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let Emit {
            span,
            head,
            event: _,
            fields,
            options,
        } = self;
        f(span);
        f(head);
        for EmitField {
            name: _,
            span,
            value_span,
            literal: _,
        } in fields
        {
            f(span);
            f(value_span);
        }
        for EmitOption {
            key: _,
            key_span,
            value,
            span,
            value_span,
        } in options
        {
            f(key_span);
            f(span);
            f(value_span);
            value.spans_mut(f);
        }
    }
}

impl Spans for OptionValue {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            OptionValue::List(items) => items.spans_mut(f),
            OptionValue::Record(items) => items.spans_mut(f),
            OptionValue::Int(_)
            | OptionValue::Str(_)
            | OptionValue::Bool(_)
            | OptionValue::Computed => {}
        }
    }
}

impl Spans for code::Body {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Body { stmts, locals: _ } = self;
        stmts.spans_mut(f);
    }
}

impl Spans for code::Stmt {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Stmt { kind, span } = self;
        f(span);
        match kind {
            code::StmtKind::Set(_, e) | code::StmtKind::Expr(e) => e.spans_mut(f),
            code::StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                cond.spans_mut(f);
                then_block.spans_mut(f);
                else_block.spans_mut(f);
            }
            code::StmtKind::For {
                item: _,
                items,
                max: _,
                body,
            } => {
                items.spans_mut(f);
                body.spans_mut(f);
            }
            code::StmtKind::Return(e) => e.spans_mut(f),
            code::StmtKind::Reject(r) => r.spans_mut(f),
            code::StmtKind::Emit(e) => e.spans_mut(f),
        }
    }
}

impl Spans for code::Expr {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        use code::ExprKind as K;
        let code::Expr { kind, span } = self;
        f(span);
        match kind {
            K::Field(e, _)
            | K::Not(e)
            | K::Neg(e)
            | K::TextOf(e)
            | K::Attempt(e)
            | K::Validate {
                ty: _,
                value: e,
                literal: _,
            } => e.spans_mut(f),
            K::Construct { ty: _, fields } => fields.spans_mut(f),
            K::List(items) | K::Function(_, items) => items.spans_mut(f),
            K::Block(stmts) => stmts.spans_mut(f),
            K::Binary(_, a, b) => {
                a.spans_mut(f);
                b.spans_mut(f);
            }
            K::Query(q) => q.spans_mut(f),
            K::Fallible(x) => x.spans_mut(f),
            K::Match { scrutinee, arms } => {
                scrutinee.spans_mut(f);
                for code::Arm {
                    pattern: _,
                    body,
                    span,
                } in arms
                {
                    body.spans_mut(f);
                    f(span);
                }
            }
            K::Reject(r) => r.spans_mut(f),
            K::Unit
            | K::Bool(_)
            | K::Int(_)
            | K::Decimal(_)
            | K::Text(_)
            | K::Duration(_)
            | K::None
            | K::Local(_)
            | K::Config(_)
            | K::ClockNow
            | K::Variant(..)
            | K::Count(_)
            | K::Propagate
            | K::Error => {}
        }
    }
}

impl Spans for code::Fallible {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            code::Fallible::Op {
                op: _,
                request,
                site,
            } => {
                request.spans_mut(f);
                f(site);
            }
            code::Fallible::Action {
                action: _,
                args,
                site,
            } => {
                args.spans_mut(f);
                f(site);
            }
            code::Fallible::Write(w) => w.spans_mut(f),
            code::Fallible::Query(q) => q.spans_mut(f),
            code::Fallible::Validate { ty: _, value } => value.spans_mut(f),
        }
    }
}

impl Spans for code::Write {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            code::Write::Create {
                entity: _,
                fields,
                conflict: _,
            } => fields.spans_mut(f),
            code::Write::Update {
                entity: _,
                filter,
                set,
                missing: _,
                conflict: _,
            } => {
                filter.spans_mut(f);
                set.spans_mut(f);
            }
            code::Write::Delete {
                entity: _,
                filter,
                missing: _,
            } => filter.spans_mut(f),
        }
    }
}

impl Spans for code::Query {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Query {
            mode: _,
            entity: _,
            filter,
            missing: _,
            limit: _,
        } = self;
        filter.spans_mut(f);
    }
}

impl Spans for code::Reject {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Reject {
            failure: _,
            fields,
            span,
        } = self;
        fields.spans_mut(f);
        f(span);
    }
}

impl Spans for code::Emit {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Emit {
            event: _,
            fields,
            options,
            span,
        } = self;
        fields.spans_mut(f);
        options.spans_mut(f);
        f(span);
    }
}

impl Spans for code::OptionCode {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            code::OptionCode::Expr(e) => e.spans_mut(f),
            code::OptionCode::Record(items) => items.spans_mut(f),
        }
    }
}

impl Spans for code::Function {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let code::Function {
            name: _,
            params: _,
            ret: _,
            span,
            code,
            reads: _,
        } = self;
        f(span);
        code.spans_mut(f);
    }
}

impl Spans for test::Fixture {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let test::Fixture {
            name: _,
            span,
            clock: _,
            config,
            retry_after_ms: _,
            attempts: _,
            fakes,
        } = self;
        f(span);
        config.spans_mut(f);
        for test::Fake {
            package: _,
            answers,
        } in fakes
        {
            for test::FakeAnswer {
                op: _,
                answer,
                span,
            } in answers
            {
                answer.spans_mut(f);
                f(span);
            }
        }
    }
}

impl Spans for test::AnswerCode {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        match self {
            test::AnswerCode::Value(e) => e.spans_mut(f),
            test::AnswerCode::Fail { failure: _, fields } => fields.spans_mut(f),
            test::AnswerCode::Lost(inner) => inner.spans_mut(f),
            test::AnswerCode::Done | test::AnswerCode::InUse | test::AnswerCode::ServerError => {}
        }
    }
}

impl Spans for test::Test {
    fn spans_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        let test::Test {
            name: _,
            span,
            owner: _,
            fixture: _,
            steps,
            locals: _,
        } = self;
        f(span);
        for test::TestStep { kind, span } in steps {
            match kind {
                test::TestStepKind::Set(_, e)
                | test::TestStepKind::Assert(e)
                | test::TestStepKind::Advance(e) => e.spans_mut(f),
                test::TestStepKind::Deliver(test::Delivery {
                    bind: _,
                    target,
                    expect: _,
                }) => match target {
                    test::DeliveryTarget::Call { action: _, args } => args.spans_mut(f),
                    test::DeliveryTarget::Deliver {
                        event: _,
                        payload,
                        entries: _,
                    } => payload.spans_mut(f),
                },
            }
            f(span);
        }
    }
}
