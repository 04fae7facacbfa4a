# A shard director over three caches, keyed by the X-User header.
vcl 4.1;
import directors;

backend cache1 { .host = "10.0.0.1"; .port = "8080"; }
backend cache2 { .host = "10.0.0.2"; .port = "8080"; }
backend cache3 { .host = "10.0.0.3"; .port = "8080"; }

sub vcl_init {
    new shard = directors.shard();
    shard.add_backend(cache1);
    shard.add_backend(cache2, weight=2);
    shard.add_backend(cache3, ident="10.0.0.3:8080");
    shard.reconfigure(replicas=100);
}

sub vcl_recv {
    set req.backend_hint = shard.backend(by=KEY, key=shard.key(req.http.X-User));
    return (pass);
}
