//! The same duration every time: a plain duration string means this too.

use super::Distribution;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Distribution> = Kind { name: "fixed", summary: "always the same duration (a plain duration string means this too)", build };

struct Fixed(f64);

fn build(spec: &Spec) -> SpecResult<Box<dyn Distribution>> {
    let value = spec.duration_ns("value", None, "the duration")?;
    Ok(Box::new(Fixed(value as f64)))
}

impl Distribution for Fixed {
    fn draw_ns(&self, _rng: &mut RngStream) -> f64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_constant() {
        super::super::tests::assert_moments("kind = \"fixed\"\nvalue = \"20us\"", 100, 20_000.0, 0.0);
    }
}
