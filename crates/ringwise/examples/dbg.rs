use ringwise::{Allocator, Explicit, Node, Placement, Ring};
fn main() {
    let a = Allocator::new(16).unwrap().replicas(3).unwrap();
    let mut ring: Ring<Explicit> = Ring::builder().scheme(Explicit).build().unwrap();
    for i in 0..25usize {
        let node = Node::new(format!("node-{i:02}"));
        let pts = a.allocate(&ring, &node).unwrap();
        ring = ring.with_node_points(node, pts).unwrap();
        let b = a.balance(&ring);
        let mut r: Vec<(f64, String)> = (0..b.share.len()).map(|id| (b.share[id]/b.expected[id], ring.nodes().name(id as u32).unwrap().to_string())).collect();
        r.sort_by(|x, y| y.0.total_cmp(&x.0));
        let me = r.iter().find(|x| x.1 == format!("node-{i:02}")).unwrap().0;
        println!("{}: new {:.2} top {:?}", i+1, me, &r[..r.len().min(3)].iter().map(|x| format!("{}:{:.2}", x.1, x.0)).collect::<Vec<_>>());
    }
}
