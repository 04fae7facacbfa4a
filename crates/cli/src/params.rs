//! The algorithm parameters' options (`--vnodes`, `--table-size`, ...,
//! `--capacity`), derived from the core's one parameter list
//! ([`ringwise::for_each_param!`]): each entry's flag, value name, help and
//! range become one option, and its value a [`ParamValue`]. A parameter
//! added to the list appears here, in `lookup`, `inspect` and `plan`, and
//! (when the list says `simulate`) in `simulate`, with no edit.
//!
//! `ParamArgs` holds every parameter; `ParamArgs<true>` only those that
//! `simulate` takes ([`Param::in_simulate`]).

use clap::builder::{TypedValueParser, ValueParser};
use clap::{ArgMatches, Args, FromArgMatches};
use ringwise::{Flavor, InSimulate, Param, ParamValue, Params, SlotLayout};

/// The parameters given on the command line, in the list's order.
#[derive(Debug, Clone, Default)]
pub struct ParamArgs<const SIMULATE: bool = false> {
    given: Vec<(Param, ParamValue)>,
}

impl<const SIMULATE: bool> ParamArgs<SIMULATE> {
    /// The parameters these options declare.
    fn declared() -> impl Iterator<Item = Param> {
        Param::ALL
            .iter()
            .copied()
            .filter(|p| !SIMULATE || p.in_simulate() != InSimulate::No)
    }

    /// Sets the parameters that were given. Their values passed the
    /// option's parser, whose type is the parameter's.
    pub fn apply(&self, params: &mut Params) {
        for &(param, value) in &self.given {
            // Cannot fail: the parser made a value of the parameter's type.
            let _ = params.set(param, value);
        }
    }

    /// The parameters given, with their values.
    pub fn given(&self) -> &[(Param, ParamValue)] {
        &self.given
    }

    /// Whether `param` was given.
    pub fn has(&self, param: Param) -> bool {
        self.given.iter().any(|&(p, _)| p == param)
    }

    /// Whether either of Envoy's ring sizes was given (they are checked
    /// together, min <= max).
    pub fn ring_size_given(&self) -> bool {
        self.has(Param::MinRingSize) || self.has(Param::MaxRingSize)
    }
}

impl<const SIMULATE: bool> FromArgMatches for ParamArgs<SIMULATE> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = ParamArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for param in Self::declared() {
            let value = matches.try_get_one::<ParamValue>(param.name());
            let value =
                value.map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))?;
            if let Some(&value) = value {
                self.given.retain(|&(p, _)| p != param);
                self.given.push((param, value));
            }
        }
        Ok(())
    }
}

impl<const SIMULATE: bool> Args for ParamArgs<SIMULATE> {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for param in Self::declared() {
            cmd = cmd.arg(
                clap::Arg::new(param.name())
                    .long(param.flag())
                    .value_name(param.value_name())
                    .help(param.help())
                    .value_parser(value_parser(param)),
            );
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// How an option of each parameter type parses its value.
trait Flag {
    /// The parser, within `range` when there is one.
    fn parser(range: Option<std::ops::RangeInclusive<u64>>) -> ValueParser;
}

impl Flag for u32 {
    fn parser(range: Option<std::ops::RangeInclusive<u64>>) -> ValueParser {
        let count = |v: u32| ParamValue::Count(v.into());
        match range {
            Some(r) => {
                let r = i64::try_from(*r.start()).unwrap_or(i64::MAX)
                    ..=i64::try_from(*r.end()).unwrap_or(i64::MAX);
                clap::value_parser!(u32).range(r).map(count).into()
            }
            None => clap::value_parser!(u32).map(count).into(),
        }
    }
}

impl Flag for u64 {
    fn parser(range: Option<std::ops::RangeInclusive<u64>>) -> ValueParser {
        match range {
            Some(r) => clap::value_parser!(u64)
                .range(r)
                .map(ParamValue::Count)
                .into(),
            None => clap::value_parser!(u64).map(ParamValue::Count).into(),
        }
    }
}

impl Flag for bool {
    fn parser(_: Option<std::ops::RangeInclusive<u64>>) -> ValueParser {
        clap::builder::BoolishValueParser::new()
            .map(ParamValue::Bool)
            .into()
    }
}

impl Flag for Flavor {
    fn parser(_: Option<std::ops::RangeInclusive<u64>>) -> ValueParser {
        crate::algo::flavors().map(ParamValue::Flavor).into()
    }
}

impl Flag for SlotLayout {
    fn parser(_: Option<std::ops::RangeInclusive<u64>>) -> ValueParser {
        crate::algo::slot_layouts()
            .map(ParamValue::SlotLayout)
            .into()
    }
}

/// The parser of each parameter's option, from its type in the list.
macro_rules! value_parsers {
    ([] $($(#[doc = $doc:literal])* $variant:ident($field:ident: $ty:ty) { $($rest:tt)* })+) => {
        fn value_parser(param: Param) -> ValueParser {
            match param {
                $(Param::$variant => <$ty as Flag>::parser(param.range()),)+
                // A parameter this build of the CLI does not know.
                _ => ValueParser::string(),
            }
        }
    };
}

ringwise::for_each_param!(value_parsers);
