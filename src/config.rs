//! Module settings: defaults for auto-created filters and the per-filter memory ceiling.
//! Set from load-time arguments; read on every command that may create or grow a filter.

use crate::errors;
use redbloom_core::{cuckoo, limits};
use redis_module::configuration::{
    register_enum_configuration, register_i64_configuration, register_string_configuration,
    ConfigurationContext, ConfigurationFlags, ConfigurationValue,
};
use redis_module::{Context, RedisError, RedisString};
use std::sync::atomic::{AtomicU64, Ordering};

/// A setting shared between the load-time arguments and the commands (Redis runs commands
/// on one thread; atomics keep this safe without locks).
pub struct Setting(AtomicU64);

impl Setting {
    const fn new(value: u64) -> Self {
        Setting(AtomicU64::new(value))
    }
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
    pub fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed)
    }
    pub fn get_f64(&self) -> f64 {
        f64::from_bits(self.get())
    }
    pub fn set_f64(&self, value: f64) {
        self.set(value.to_bits())
    }
}

/// BF defaults (COMPAT §1): error rate 0.01, capacity 100, expansion 2.
pub static BF_ERROR_RATE: Setting = Setting::new(limits::BF_DEFAULT_ERROR_RATE_BITS);
pub static BF_INITIAL_SIZE: Setting = Setting::new(limits::BF_DEFAULT_CAPACITY);
pub static BF_EXPANSION: Setting = Setting::new(limits::BF_DEFAULT_EXPANSION as u64);
/// 1: filters created implicitly (BF.ADD, BF.MADD, BF.INSERT without BLOCKED) get the
/// cache-local layout; redbloom's own, default 0 (RedisBloom's layout).
pub static BF_BLOCKED: Setting = Setting::new(0);
/// CF defaults (COMPAT §2): capacity 1024, bucket size 2, max iterations 20, expansion 1.
pub static CF_INITIAL_SIZE: Setting = Setting::new(limits::CF_DEFAULT_CAPACITY);
pub static CF_BUCKET_SIZE: Setting = Setting::new(limits::CF_DEFAULT_BUCKET_SIZE as u64);
pub static CF_MAX_ITERATIONS: Setting = Setting::new(limits::CF_DEFAULT_MAX_ITERATIONS as u64);
pub static CF_EXPANSION: Setting = Setting::new(limits::CF_DEFAULT_EXPANSION as u64);
/// CF's limit on sub-filters before `Maximum expansions reached`.
pub static CF_MAX_EXPANSIONS: Setting = Setting::new(limits::CF_DEFAULT_MAX_EXPANSIONS as u64);
/// Largest memory one filter may use (as MEMORY USAGE counts it, without the key).
pub static MAX_FILTER_BYTES: Setting = Setting::new(limits::DEFAULT_MAX_FILTER_BYTES);

/// How `SF.BUILD ... FROM` copies a large source (`bf.sf-build-slices`): in slices on the
/// main thread, the default, or by forking at once (`no`); `hold` (for tests) starts the
/// copy with one slice, then holds it (and its fallback) until set back to `yes`.
pub static SF_BUILD_SLICES: Setting = Setting::new(SfBuildSlices::yes as u64);

redis_module::enum_configuration! {
    #[allow(non_camel_case_types)]
    #[derive(Debug, PartialEq, Eq)]
    pub enum SfBuildSlices {
        no = 0,
        yes = 1,
        hold = 2,
    }
}

impl SfBuildSlices {
    /// The current setting.
    pub fn get() -> SfBuildSlices {
        SfBuildSlices::try_from(SF_BUILD_SLICES.get() as i32).unwrap_or(SfBuildSlices::yes)
    }
}

impl ConfigurationValue<SfBuildSlices> for Setting {
    fn get(&self, _ctx: &ConfigurationContext) -> SfBuildSlices {
        SfBuildSlices::try_from(Setting::get(self) as i32).unwrap_or(SfBuildSlices::yes)
    }
    fn set(&self, _ctx: &ConfigurationContext, value: SfBuildSlices) -> Result<(), RedisError> {
        Setting::set(self, i32::from(value) as u64);
        Ok(())
    }
}

/// Parameters of a Cuckoo filter created without explicit options.
pub fn cf_defaults() -> redbloom_core::cuckoo::CuckooParams {
    redbloom_core::cuckoo::CuckooParams {
        capacity: CF_INITIAL_SIZE.get(),
        bucket_size: CF_BUCKET_SIZE.get() as u16,
        max_iterations: CF_MAX_ITERATIONS.get() as u16,
        expansion: CF_EXPANSION.get() as u16,
    }
}

impl ConfigurationValue<i64> for Setting {
    fn get(&self, _ctx: &ConfigurationContext) -> i64 {
        Setting::get(self) as i64
    }
    fn set(&self, _ctx: &ConfigurationContext, value: i64) -> Result<(), RedisError> {
        Setting::set(self, value as u64);
        Ok(())
    }
}

/// The default error rate as a string config (a double is not a numeric config).
pub struct ErrorRateConfig;

pub static BF_ERROR_RATE_CONFIG: ErrorRateConfig = ErrorRateConfig;

impl ConfigurationValue<RedisString> for ErrorRateConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        RedisString::create(None, BF_ERROR_RATE.get_f64().to_string().as_str())
    }
    fn set(&self, _ctx: &ConfigurationContext, value: RedisString) -> Result<(), RedisError> {
        let rate: f64 = value
            .try_as_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or(RedisError::Str(errors::CONFIG_BAD_ERROR_RATE))?;
        if rate.is_nan() || rate <= 0.0 || rate >= 1.0 {
            return Err(RedisError::Str(errors::CONFIG_ERROR_RATE_RANGE));
        }
        BF_ERROR_RATE.set_f64(rate);
        Ok(())
    }
}

/// Numeric module configs: (name, setting, min, max). Redis 7.x shows them prefixed with
/// the module name (`bf.bf-initial-size`). Ranges are RedisBloom HEAD's.
fn numeric_configs() -> [(&'static str, &'static Setting, i64, i64); 9] {
    const MAX_EXPANSION: i64 = limits::MAX_EXPANSION as i64;
    [
        ("bf-initial-size", &BF_INITIAL_SIZE, 1, 1 << 30),
        ("bf-expansion-factor", &BF_EXPANSION, 0, MAX_EXPANSION),
        ("bf-blocked", &BF_BLOCKED, 0, 1),
        (
            "cf-bucket-size",
            &CF_BUCKET_SIZE,
            1,
            i64::from(cuckoo::MAX_BUCKET_SIZE),
        ),
        ("cf-initial-size", &CF_INITIAL_SIZE, 4, 1 << 30),
        ("cf-max-iterations", &CF_MAX_ITERATIONS, 1, 65535),
        ("cf-expansion-factor", &CF_EXPANSION, 0, MAX_EXPANSION),
        ("cf-max-expansions", &CF_MAX_EXPANSIONS, 1, 65536),
        ("max-filter-bytes", &MAX_FILTER_BYTES, 1 << 20, i64::MAX),
    ]
}

/// The settings RedisBloom 8 registers without a prefix (`CONFIG GET bf-error-rate`).
const REDISBLOOM_8_NAMES: [&str; 8] = [
    "bf-error-rate",
    "bf-initial-size",
    "bf-expansion-factor",
    "cf-bucket-size",
    "cf-initial-size",
    "cf-max-iterations",
    "cf-expansion-factor",
    "cf-max-expansions",
];

/// How a setting is registered: on servers that take unprefixed module configs (Redis 8),
/// RedisBloom 8's names are registered unprefixed, with the prefixed name as alias (one
/// setting, two names: `bf-error-rate` and `bf.bf-error-rate`); elsewhere, and for
/// redbloom's own settings, under the module's prefix (`bf.<name>`).
fn registered_name(
    name: &'static str,
    flags: ConfigurationFlags,
    unprefixed: bool,
) -> (String, ConfigurationFlags) {
    if unprefixed && REDISBLOOM_8_NAMES.contains(&name) {
        (
            format!("{name}|bf.{name}"),
            flags | ConfigurationFlags::UNPREFIXED,
        )
    } else {
        (name.to_string(), flags)
    }
}

/// Registers every setting as a module config (CONFIG GET/SET) with its current value —
/// the load-time arguments already applied — as default, then lets Redis apply the
/// values of its config file.
pub fn register(ctx: &Context) {
    let unprefixed = crate::api::config::supports_unprefixed_configs(ctx);
    for (name, setting, min, max) in numeric_configs() {
        let flags = if name == "max-filter-bytes" {
            ConfigurationFlags::MEMORY
        } else {
            ConfigurationFlags::DEFAULT
        };
        let (name, flags) = registered_name(name, flags, unprefixed);
        let default = (setting.get().min(i64::MAX as u64) as i64).clamp(min, max);
        register_i64_configuration(ctx, &name, setting, default, min, max, flags, None);
    }
    let (name, flags) = registered_name("bf-error-rate", ConfigurationFlags::DEFAULT, unprefixed);
    register_string_configuration(
        ctx,
        &name,
        &BF_ERROR_RATE_CONFIG,
        &BF_ERROR_RATE.get_f64().to_string(),
        flags,
        None,
    );
    register_enum_configuration(
        ctx,
        "sf-build-slices",
        &SF_BUILD_SLICES,
        SfBuildSlices::yes,
        ConfigurationFlags::DEFAULT,
        None,
    );
    crate::api::config::load_configs(ctx);
}

/// The load-time arguments, in RedisBloom 2.4.20's spelling and HEAD's.
const LOAD_ARGS: &str =
    "ERROR_RATE (bf-error-rate), INITIAL_SIZE (bf-initial-size), CF_MAX_EXPANSIONS (cf-max-expansions)";

/// Why the module refuses to load: the unknown argument by name, what is accepted, and where
/// the other settings live (a bare "Unrecognized option" left users guessing).
fn unrecognized_load_arg(name: &[u8]) -> String {
    let configs: Vec<String> = numeric_configs()
        .iter()
        .map(|(name, ..)| format!("bf.{name}"))
        .collect();
    format!(
        "Unrecognized option '{}'. Load arguments: {LOAD_ARGS}. Other settings are module \
         configs, set as `<name> <value>` lines in redis.conf or with CONFIG SET: bf.bf-error-rate, {}",
        String::from_utf8_lossy(name),
        configs.join(", ")
    )
}

/// Applies load-time arguments: name/value pairs, each name in RedisBloom 2.4.20's spelling
/// or HEAD's. A single empty argument means none.
pub fn apply_load_args(args: &[Vec<u8>]) -> Result<(), String> {
    if args.len() == 1 && args[0].is_empty() {
        return Ok(());
    }
    if !args.len().is_multiple_of(2) {
        return Err(errors::LOAD_ARGS_ODD.to_string());
    }
    for pair in args.chunks(2) {
        let name = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
        let value = std::str::from_utf8(&pair[1]).unwrap_or("");
        match name.as_str() {
            "error_rate" | "bf-error-rate" => {
                let rate: f64 = value
                    .parse()
                    .map_err(|_| errors::LOAD_BAD_ERROR_RATE.to_string())?;
                if rate.is_nan() || rate <= 0.0 {
                    return Err(errors::LOAD_ERROR_RATE_NOT_POSITIVE.to_string());
                }
                if rate >= 1.0 {
                    return Err(errors::LOAD_ERROR_RATE_NOT_BELOW_ONE.to_string());
                }
                BF_ERROR_RATE.set_f64(rate);
            }
            "initial_size" | "bf-initial-size" => {
                let size: i64 = value
                    .parse()
                    .map_err(|_| errors::LOAD_BAD_INITIAL_SIZE.to_string())?;
                if size <= 0 {
                    return Err(errors::LOAD_INITIAL_SIZE_NOT_POSITIVE.to_string());
                }
                BF_INITIAL_SIZE.set(size as u64);
            }
            "cf_max_expansions" | "cf-max-expansions" => {
                let max: i64 = value
                    .parse()
                    .map_err(|_| errors::LOAD_BAD_CF_MAX_EXPANSIONS.to_string())?;
                if max < 1 {
                    return Err(errors::LOAD_CF_MAX_EXPANSIONS_RANGE.to_string());
                }
                CF_MAX_EXPANSIONS.set(max as u64);
            }
            _ => return Err(unrecognized_load_arg(&pair[0])),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_error_rate_is_one_percent() {
        assert_eq!(BF_ERROR_RATE.get_f64(), 0.01);
    }

    #[test]
    fn redisbloom_8_names_are_unprefixed_with_the_prefixed_alias_where_supported() {
        let (name, flags) = registered_name("cf-max-expansions", ConfigurationFlags::DEFAULT, true);
        assert_eq!(name, "cf-max-expansions|bf.cf-max-expansions");
        assert!(flags.contains(ConfigurationFlags::UNPREFIXED));
        let (name, flags) = registered_name("max-filter-bytes", ConfigurationFlags::MEMORY, true);
        assert_eq!(name, "max-filter-bytes");
        assert_eq!(flags.bits(), ConfigurationFlags::MEMORY.bits());
        let (name, flags) = registered_name("bf-error-rate", ConfigurationFlags::DEFAULT, false);
        assert_eq!(name, "bf-error-rate");
        assert_eq!(flags.bits(), ConfigurationFlags::DEFAULT.bits());
        for name in REDISBLOOM_8_NAMES {
            assert!(
                name == "bf-error-rate" || numeric_configs().iter().any(|c| c.0 == name),
                "{name}"
            );
        }
    }

    #[test]
    fn an_unknown_load_argument_is_named_with_what_is_accepted() {
        let message = apply_load_args(&[b"EXPANSION".to_vec(), b"4".to_vec()]).unwrap_err();
        assert!(message.starts_with("Unrecognized option 'EXPANSION'. Load arguments: ERROR_RATE (bf-error-rate), INITIAL_SIZE (bf-initial-size), CF_MAX_EXPANSIONS (cf-max-expansions)."), "{message}");
        assert!(message.contains("bf.bf-expansion-factor"), "{message}");
        assert!(message.contains("bf.max-filter-bytes"), "{message}");
    }
}
