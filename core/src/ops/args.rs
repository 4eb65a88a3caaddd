//! Arguments, checked against the registry before an operation runs: unknown,
//! missing and mistyped arguments are refused with the allowed ones named.

use super::spec::{OpSpec, Ty};
use crate::error::{fail, Failure, OpResult};
use crate::names;
use serde_json::{Map, Value};

/// The largest string value an operation takes (a note body included).
pub const MAX_STRING: usize = 1 << 20;

pub struct Args {
    pub op: &'static str,
    pub map: Map<String, Value>,
}

fn ty_name(t: Ty) -> &'static str {
    match t {
        Ty::Str => "a string",
        Ty::Int => "an integer",
        Ty::Bool => "true or false",
        Ty::Obj => "an object",
        Ty::Arr => "a list",
        Ty::StrList => "a list of strings",
        Ty::StrOrList => "a string or a list of strings",
        Ty::Any => "any value",
    }
}

fn fits(t: Ty, v: &Value) -> bool {
    match t {
        Ty::Str => v.is_string(),
        Ty::Int => v.is_i64() || v.is_u64(),
        Ty::Bool => v.is_boolean(),
        Ty::Obj => v.is_object(),
        Ty::Arr => v.is_array(),
        Ty::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Ty::StrOrList => v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Ty::Any => true,
    }
}

fn too_big(v: &Value) -> bool {
    match v {
        Value::String(s) => s.len() > MAX_STRING,
        Value::Array(a) => a.iter().any(too_big),
        Value::Object(o) => o.iter().any(|(k, v)| k.len() > MAX_STRING || too_big(v)),
        _ => false,
    }
}

impl Args {
    pub fn check(spec: &'static OpSpec, args: Value) -> OpResult<Args> {
        let allowed = spec.param_names();
        let list = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
        let map = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return fail(Failure::bad_input(
                    spec.name,
                    format!("the arguments must be a JSON object, not {}", kind_of(&other)),
                    format!("Send {{\"name\": value, …}} with these arguments: {list}."),
                ))
            }
        };
        let params = spec.all_params();
        for (k, v) in &map {
            let Some(p) = params.iter().find(|p| p.name == k) else {
                return fail(Failure::bad_input(
                    spec.name,
                    format!("unknown argument \"{k}\"{}", names::did_you_mean(k, allowed.iter().copied())),
                    format!("{} takes: {list}.", spec.name),
                ));
            };
            if v.is_null() && !p.required {
                continue;
            }
            if !fits(p.ty, v) {
                return fail(Failure::bad_input(
                    spec.name,
                    format!("argument \"{k}\" must be {}, not {}", ty_name(p.ty), kind_of(v)),
                    format!("{}: {}", p.name, p.description),
                ));
            }
            if too_big(v) {
                return fail(Failure::bad_input(
                    spec.name,
                    format!("argument \"{k}\" holds a value over {} bytes", MAX_STRING),
                    "Keep values and bodies under 1 MiB: put large content in attachments.",
                ));
            }
        }
        for p in params.iter().filter(|p| p.required) {
            if map.get(p.name).is_none_or(Value::is_null) {
                return fail(Failure::bad_input(
                    spec.name,
                    format!("missing argument \"{}\" ({})", p.name, ty_name(p.ty)),
                    format!("{}: {}", p.name, p.description),
                ));
            }
        }
        Ok(Args { op: spec.name, map })
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// A required string (the registry has checked it is there).
    pub fn req(&self, name: &str) -> &str {
        self.str(name).unwrap_or_default()
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// An integer argument, `default` when absent, that must lie in `range`:
    /// else refused as "NAME N is out of range", with `hint`.
    pub fn int_in(&self, name: &str, default: i64, range: std::ops::RangeInclusive<i64>, hint: &str) -> OpResult<i64> {
        let v = self.int(name).unwrap_or(default);
        if range.contains(&v) {
            Ok(v)
        } else {
            fail(Failure::bad_input(self.op, format!("{name} {v} is out of range"), hint))
        }
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    pub fn obj(&self, name: &str) -> Option<&Map<String, Value>> {
        self.get(name).and_then(Value::as_object)
    }

    pub fn list(&self, name: &str) -> Vec<String> {
        match self.get(name) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
            _ => vec![],
        }
    }

    pub fn dry_run(&self) -> bool {
        self.bool("dry_run").unwrap_or(false)
    }
}

pub fn kind_of(v: &Value) -> String {
    let s = v.to_string();
    let shown = if s.chars().count() > 60 { format!("{}…", s.chars().take(57).collect::<String>()) } else { s };
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    format!("{kind} ({shown})")
}
