//! The chart's colours. Roofs are coloured by what they limit (fp64 reds,
//! fp32 blues, fp16/bf16 purples, memory levels greens to greys); points take
//! colours no roof uses, so that each can be found on the picture.

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub fn hex(&self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// Colour of a compute roof: by precision, vector or scalar, and the index
/// of the roof among those of the same kind.
pub fn compute(precision: &str, vector: bool, index: usize) -> Rgb {
    let shades: &[Rgb] = match (precision, vector) {
        ("fp64", true) => &[
            Rgb(0xb2, 0x18, 0x2b),
            Rgb(0x80, 0x00, 0x26),
            Rgb(0xd7, 0x30, 0x27),
        ],
        ("fp64", false) => &[Rgb(0xf4, 0x6d, 0x43), Rgb(0xe0, 0x82, 0x14)],
        ("fp32", true) => &[
            Rgb(0x21, 0x66, 0xac),
            Rgb(0x08, 0x30, 0x6b),
            Rgb(0x35, 0x4c, 0xa1),
        ],
        ("fp32", false) => &[Rgb(0x43, 0x93, 0xc3), Rgb(0x74, 0xad, 0xd1)],
        ("fp16", _) => &[Rgb(0x76, 0x2a, 0x83), Rgb(0x99, 0x70, 0xab)],
        ("bf16", _) => &[Rgb(0xc5, 0x1b, 0x7d), Rgb(0xde, 0x77, 0xae)],
        _ => &[Rgb(0x55, 0x55, 0x55)],
    };
    shades[index % shades.len()]
}

/// Colour of a bandwidth roof by memory level.
pub fn bandwidth(level: &str) -> Rgb {
    match level.to_ascii_uppercase().as_str() {
        "L1" => Rgb(0x1b, 0x78, 0x37),
        "L2" => Rgb(0x4d, 0xac, 0x26),
        "L3" => Rgb(0x8c, 0x51, 0x0a),
        "DRAM" | "MEM" | "MEMORY" => Rgb(0x40, 0x40, 0x40),
        _ => Rgb(0x80, 0x80, 0x80),
    }
}

/// Point colours, in order of the points.
pub const POINTS: [Rgb; 8] = [
    Rgb(0xff, 0x7f, 0x00),
    Rgb(0x17, 0xbe, 0xcf),
    Rgb(0xe7, 0x29, 0x8a),
    Rgb(0x66, 0xa6, 0x1e),
    Rgb(0x6a, 0x3d, 0x9a),
    Rgb(0xa6, 0x56, 0x28),
    Rgb(0x00, 0x00, 0x00),
    Rgb(0xe6, 0xab, 0x02),
];

pub fn point(index: usize) -> Rgb {
    POINTS[index % POINTS.len()]
}

/// `c` mixed with white: `white` 0 keeps it, 1 gives white.
pub fn lighten(c: Rgb, white: f64) -> Rgb {
    let mix = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * white.clamp(0.0, 1.0)).round() as u8;
    Rgb(mix(c.0), mix(c.1), mix(c.2))
}

pub const TEXT: Rgb = Rgb(0x22, 0x22, 0x22);
pub const GRID_MAJOR: Rgb = Rgb(0xd0, 0xd0, 0xd0);
pub const GRID_MINOR: Rgb = Rgb(0xee, 0xee, 0xee);
pub const FRAME: Rgb = Rgb(0x80, 0x80, 0x80);
pub const LEADER: Rgb = Rgb(0x70, 0x70, 0x70);
/// Notes about what the chart could not show.
pub const NOTE: Rgb = Rgb(0x8c, 0x51, 0x0a);
