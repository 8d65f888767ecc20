//! Tile-mode tensor copies (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`,
//! `cp.async.bulk.prefetch.tensor`) with tensor maps declared in the init block: each test of
//! `tests/tensor/` with its verdict, final states and findings, and the rejected forms with
//! their messages.

use ptxmm::decide::{Decider, Outcome, Verdict};
use ptxmm::diag::SourceFile;

fn load(path: &str) -> Result<ptxmm::program::Program, String> {
    let text = std::fs::read_to_string(path).unwrap();
    ptxmm::parse_program(SourceFile::new(path.to_string(), text)).map_err(|e| e.to_string())
}

fn run(name: &str) -> Outcome {
    let program = load(&format!("tests/tensor/{name}.litmus")).unwrap_or_else(|e| panic!("{e}"));
    Decider::new(&ptxmm::Config::default_model()).verdict(&program).unwrap()
}

/// The final states, each as `name=value; ...` in the order of the outcome's observables.
fn states(o: &Outcome) -> Vec<String> {
    o.states
        .keys()
        .map(|s| o.observable_names.iter().zip(s.iter()).map(|(n, v)| format!("{n}={v};")).collect::<Vec<_>>().join(" "))
        .collect()
}

fn rules(o: &Outcome) -> Vec<&str> {
    o.undefined.iter().map(|f| f.rule.as_str()).collect()
}

#[test]
fn a_2d_load_through_the_mbarrier_has_no_stale_read() {
    let o = run("T01-load-2d-mbarrier");
    assert_eq!(o.verdict(), Verdict::Forbidden, "{:?}", states(&o));
    assert_eq!(states(&o), ["1:r0=14; 1:r1=17; 1:r2=24; 1:r3=27;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn writing_the_tensor_map_while_the_copy_is_in_flight_is_undefined() {
    let o = run("T02-tensor-map-modified-in-flight");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert_eq!(rules(&o), ["U2-tensor-map-modified-in-flight"]);
    let f = o.undefined.iter().next().unwrap();
    assert!(
        f.message.contains("source read of `cp.async.bulk.tensor.2d") && f.message.contains("st.global.u32 [tmap], 1"),
        "{}",
        f.message
    );
}

#[test]
fn writing_the_tensor_map_after_the_phase_completes_is_defined() {
    let o = run("T03-tensor-map-modified-after-completion");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn out_of_bounds_elements_arrive_as_zeros() {
    let o = run("T04-load-out-of-bounds-zeros");
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert_eq!(states(&o), ["0:r0=26; 0:r1=27; 0:r2=0; 0:r3=0; 0:r4=0; 0:r5=0; 0:r6=0; 0:r7=0;"]);
    assert!(o.undefined.is_empty());
}

#[test]
fn a_1d_load_at_a_register_coordinate() {
    let o = run("T05-load-1d");
    assert_eq!(states(&o), ["0:r0=2; 0:r1=3; 0:r2=4; 0:r3=5;"]);
    assert!(o.undefined.is_empty());
}

#[test]
fn a_3d_load_takes_one_row_of_each_plane() {
    let o = run("T06-load-3d");
    assert_eq!(states(&o), ["0:r0=10; 0:r1=13; 0:r2=110; 0:r3=113;"]);
    assert!(o.undefined.is_empty());
}

#[test]
fn a_store_writes_only_the_in_bounds_part_of_the_box() {
    let o = run("T07-store-2d");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert_eq!(states(&o), ["0:r0=1; 0:r1=4; 0:r2=0;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn a_reduction_adds_the_box_to_the_tensor() {
    let o = run("T08-reduce-add");
    assert_eq!(states(&o), ["0:r0=14; 0:r1=25; 0:r2=36; 0:r3=47;"]);
    assert!(o.undefined.is_empty());
}

#[test]
fn a_prefetch_has_no_memory_effect() {
    let o = run("T09-prefetch");
    assert_eq!(o.verdict(), Verdict::Allowed);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn overwriting_a_stores_shared_box_in_flight_is_u2() {
    let o = run("T10-store-source-modified");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert!(rules(&o).contains(&"U2-source-modified-before-completion"), "{:?}", rules(&o));
    assert!(!rules(&o).contains(&"U2-tensor-map-modified-in-flight"));
}

/// Rejected forms and tensor maps: `file:line:col` and the message.
#[test]
fn rejected_forms_name_the_form() {
    let cases = [
        ("bad-im2col", "4:49", "the `.im2col` mode of `cp.async.bulk.tensor` is not supported by this version of ptxmm"),
        ("bad-swizzle", "2:78", "expected a swizzle: none, 32B, 64B or 128B, found `128B_atom_32B`"),
        ("bad-multicast", "4:61", "`.multicast::cluster` needs the destination `.shared::cluster`"),
        ("bad-elem-type", "2:46", "element type `b4` is not supported by this version of ptxmm"),
        ("bad-reduce-f32", "4:72", "`cp.reduce.async.bulk.tensor` on `f32` elements (tmap) is not supported"),
        ("bad-coordinate-count", "4:88", "a 2d tensor copy needs 2 coordinate(s); found 1"),
        ("bad-tensor-too-large", "2:46", "the tensor spans 64 bytes but `g` has 32"),
    ];
    for (name, at, message) in cases {
        let path = format!("tests/tensor/{name}.litmus");
        let err = load(&path).err().unwrap_or_else(|| panic!("{name} should be rejected"));
        assert!(err.contains(&format!("{path}:{at}: ")) && err.contains(message), "{name}: {err}");
    }
}

#[test]
fn reading_the_box_without_the_wait_is_u1() {
    let o = run("T11-read-without-wait");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert!(rules(&o).contains(&"U1-read-before-completion"), "{:?}", rules(&o));
    assert!(states(&o).contains(&"1:r0=0;".to_string()), "{:?}", states(&o));
}

#[test]
fn a_bf16_box_lands_swizzled() {
    let o = run("T12-load-bf16-swizzle-128B");
    assert_eq!(o.verdict(), Verdict::Forbidden, "{:?}", states(&o));
    assert_eq!(states(&o), ["0:r0=36; 0:r1=32; 0:r2=1; 0:r3=60;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn a_map_in_a_parameter_is_found_by_its_address() {
    let o = run("T13-map-in-a-parameter");
    assert_eq!(o.verdict(), Verdict::Forbidden, "{:?}", states(&o));
    assert_eq!(states(&o), ["0:r0=14; 0:r1=15; 0:r2=16; 0:r3=17;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

#[test]
fn a_multicast_box_reaches_every_cta_of_the_mask() {
    let o = run("T14-multicast");
    assert_eq!(o.verdict(), Verdict::Forbidden, "{:?}", states(&o));
    assert_eq!(states(&o), ["1:r0=10; 1:r1=11; 1:r2=12; 1:r3=13;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

/// The tensormap proxy (issue 38): a tensor map written through the generic proxy
/// (`tensormap.replace`) and then used by a tensor copy is undefined without the two halves of
/// `fence.proxy.tensormap::generic` between them, and defined with them.
#[test]
fn a_replaced_tensor_map_needs_the_tensormap_proxy_fences() {
    let o = run("T15-tensor-map-replaced-without-proxy-fence");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert_eq!(rules(&o), ["T1-tensor-map-written-without-proxy-fence"]);
    let f = o.undefined.iter().next().unwrap();
    assert!(f.message.contains("tensormap.replace.tile.global_dim.global.b1024.b32 [d], 0, 8"), "{}", f.message);
    let hint = f.hint.as_deref().unwrap_or_default();
    assert!(hint.contains("fence.proxy.tensormap::generic.release.gpu") && hint.contains("acquire.gpu [map], 128"), "{hint}");
    let o = run("T16-tensor-map-replaced-with-proxy-fences");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert!(o.undefined.is_empty() && o.races.is_empty());
}

/// A device-side descriptor as Triton builds it: fields replaced in shared memory, copied to
/// global memory by `tensormap.cp_fenceproxy` (its release half), acquired, and used by the
/// same thread's tensor copy, which uses the map those fields describe (it reads element (4, 1)).
/// Without the acquire the copy is undefined, and the hint asks for the acquire only.
#[test]
fn a_map_built_on_the_device_is_used_with_its_fields() {
    let o = run("T17-tensor-map-copied-with-cp-fenceproxy");
    assert_eq!(o.verdict(), Verdict::Forbidden);
    assert_eq!(states(&o), ["0:r0=14;"]);
    assert!(o.undefined.is_empty() && o.races.is_empty());
    let o = run("T18-tensor-map-copied-without-acquire");
    assert_eq!(o.verdict(), Verdict::Undefined);
    assert_eq!(rules(&o), ["T1-tensor-map-written-without-proxy-fence"]);
    let f = o.undefined.iter().next().unwrap();
    let hint = f.hint.as_deref().unwrap_or_default();
    assert!(hint.contains("releases the map") && hint.contains("fence.proxy.tensormap::generic.acquire.gpu"), "{hint}");
}
