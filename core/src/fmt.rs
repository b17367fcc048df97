//! C's `printf("%g")`, which BF.DEBUG uses for each link's error ratio, and the shortest
//! exact form of a double, which replicated commands carry.

/// The fewest digits that read back as exactly `x` (Redis parses with `strtod`): plain
/// for 1e-4 ≤ |x| < 1e16 (`0.01`), exponent form outside (`1e-7`, `5e-324`).
pub fn shortest(x: f64) -> String {
    if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Formats like C's `%g`: 6 significant digits, trailing zeros removed, exponent form when
/// the decimal exponent is below -4 or at least 6 (with a sign and two or more digits).
pub fn format_g(x: f64) -> String {
    const PRECISION: i32 = 6;
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Round to 6 significant digits first: the exponent after rounding decides the style.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exponent) = sci.split_once('e').expect("exponent form");
    let exponent: i32 = exponent.parse().expect("decimal exponent");
    if !(-4..PRECISION).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{}{:02}",
            strip_zeros(mantissa),
            sign,
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (PRECISION - 1 - exponent) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{format_g, shortest};

    #[test]
    fn shortest_round_trips_exactly() {
        for (x, want) in [
            (0.01, "0.01"),
            (0.001, "0.001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.00009, "9e-5"),
        ] {
            assert_eq!(shortest(x), want);
            assert_eq!(want.parse::<f64>().unwrap().to_bits(), x.to_bits());
        }
    }

    #[test]
    fn matches_c_printf_g() {
        for (x, want) in [
            (0.005, "0.005"),
            (0.000625, "0.000625"),
            (6.25e-05, "6.25e-05"),
            (1.5625e-05, "1.5625e-05"),
            (0.01, "0.01"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.0, "1"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.999999999, "1"),
            (9.999995e-05, "0.0001"),
            (3.0517578125e-05, "3.05176e-05"),
            (1e-300, "1e-300"),
            (5e-324, "4.94066e-324"),
            (0.0, "0"),
        ] {
            assert_eq!(format_g(x), want, "{x:e}");
        }
    }
}
