//! Module settings: defaults for auto-created filters and the per-filter memory ceiling.
//! Set from load-time arguments; read on every command that may create or grow a filter.

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
pub static BF_ERROR_RATE: Setting = Setting::new(0x3F84_7AE1_47AE_147B); // 0.01
pub static BF_INITIAL_SIZE: Setting = Setting::new(100);
pub static BF_EXPANSION: Setting = Setting::new(2);
/// CF defaults (COMPAT §2): capacity 1024, bucket size 2, max iterations 20, expansion 1.
pub static CF_INITIAL_SIZE: Setting = Setting::new(1024);
pub static CF_BUCKET_SIZE: Setting = Setting::new(2);
pub static CF_MAX_ITERATIONS: Setting = Setting::new(20);
pub static CF_EXPANSION: Setting = Setting::new(1);
/// CF's limit on sub-filters before `Maximum expansions reached`.
pub static CF_MAX_EXPANSIONS: Setting = Setting::new(32);
/// Largest memory one filter may use (as MEMORY USAGE counts it, without the key).
pub static MAX_FILTER_BYTES: Setting = Setting::new(crate::filter::DEFAULT_MAX_FILTER_BYTES);

/// Parameters of a Cuckoo filter created without explicit options.
pub fn cf_defaults() -> crate::filter::cuckoo::CuckooParams {
    crate::filter::cuckoo::CuckooParams {
        capacity: CF_INITIAL_SIZE.get(),
        bucket_size: CF_BUCKET_SIZE.get() as u16,
        max_iterations: CF_MAX_ITERATIONS.get() as u16,
        expansion: CF_EXPANSION.get() as u16,
    }
}

/// Applies load-time arguments: name/value pairs, each name in RedisBloom 2.4.20's spelling
/// or HEAD's. A single empty argument means none.
pub fn apply_load_args(args: &[Vec<u8>]) -> Result<(), String> {
    if args.len() == 1 && args[0].is_empty() {
        return Ok(());
    }
    if args.len() % 2 != 0 {
        return Err("Invalid number of arguments passed".to_string());
    }
    for pair in args.chunks(2) {
        let name = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
        let value = std::str::from_utf8(&pair[1]).unwrap_or("");
        match name.as_str() {
            "error_rate" | "bf-error-rate" => {
                let rate: f64 = value
                    .parse()
                    .map_err(|_| "Invalid argument for 'ERROR_RATE'".to_string())?;
                if rate.is_nan() || rate <= 0.0 {
                    return Err("ERROR_RATE must be > 0".to_string());
                }
                if rate >= 1.0 {
                    return Err("ERROR_RATE must be < 1".to_string());
                }
                BF_ERROR_RATE.set_f64(rate);
            }
            "initial_size" | "bf-initial-size" => {
                let size: i64 = value
                    .parse()
                    .map_err(|_| "Invalid argument for 'INITIAL_SIZE'".to_string())?;
                if size <= 0 {
                    return Err("INITIAL_SIZE must be > 0".to_string());
                }
                BF_INITIAL_SIZE.set(size as u64);
            }
            "cf_max_expansions" | "cf-max-expansions" => {
                let max: i64 = value
                    .parse()
                    .map_err(|_| "Invalid argument for 'CF_MAX_EXPANSIONS'".to_string())?;
                if max < 1 {
                    return Err("CF_MAX_EXPANSIONS must be an integer >= 1".to_string());
                }
                CF_MAX_EXPANSIONS.set(max as u64);
            }
            _ => return Err("Unrecognized option".to_string()),
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
}
