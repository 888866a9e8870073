#!/usr/bin/env python3
"""Writes scorch's demo profiles in data/ (deterministic; rerun to regenerate).

The profile is invented but shaped like a real one: a Rust HTTP service (tokio + hyper)
serving search requests, with JSON encoding, a database client, TLS, allocation and
kernel time. `demo-diff.folded` is the same service after a change: JSON encoding got
slower, the database path got faster thanks to a new cache, and one code path is gone.
"""
import random
from pathlib import Path

# (frame, self weight, children)
def t(name, self_w=0, *kids):
    return (name, self_w, list(kids))

KERNEL_SEND = t("entry_SYSCALL_64_after_hwframe_[k]", 0,
    t("do_syscall_64_[k]", 0,
      t("__x64_sys_sendto_[k]", 0,
        t("tcp_sendmsg_[k]", 4,
          t("tcp_push_[k]", 2, t("__tcp_transmit_skb_[k]", 5, t("ip_output_[k]", 3, t("dev_queue_xmit_[k]", 4))))))))
KERNEL_RECV = t("entry_SYSCALL_64_after_hwframe_[k]", 0,
    t("do_syscall_64_[k]", 0, t("__x64_sys_recvfrom_[k]", 0, t("tcp_recvmsg_[k]", 6, t("skb_copy_datagram_iter_[k]", 5)))))
ALLOC = t("alloc::raw_vec::RawVec<T,A>::grow_one", 2, t("__rust_realloc", 1, t("realloc", 3, t("_int_realloc", 4, t("_int_malloc", 6)))))

def service(after):
    j = 1.6 if after else 1.0      # JSON encoding slower after the change
    d = 0.55 if after else 1.0     # database faster after the change (cache)
    search = t("app::routes::search::handler", 3,
        t("app::search::parse_query", 6, t("regex::regex::string::Regex::find", 9, t("regex_automata::meta::strategy::Core::search", 14))),
        t("app::db::Pool::query", 2,
          t("sqlx_postgres::connection::executor::fetch_many", int(4 * d),
            t("sqlx_postgres::message::DataRow::decode", int(18 * d)),
            t("tokio::net::tcp::stream::TcpStream::poll_read", 1, KERNEL_RECV))),
        t("app::search::rank", 20, t("core::slice::sort::stable::driftsort_main", 26), t("app::search::score", 31, t("f64::powf", 7))),
        t("serde_json::ser::to_vec", int(5 * j),
          t("<app::model::SearchResult as serde::ser::Serialize>::serialize", int(14 * j),
            t("serde_json::ser::format_escaped_str", int(22 * j)), ALLOC)),
    )
    if after:
        search[2].insert(1, t("app::cache::Cache::get", 6, t("hashbrown::map::HashMap<K,V,S>::get", 9)))
    routes = [search,
        t("app::routes::health::handler", 1, t("serde_json::ser::to_vec", 2)),
    ]
    if not after:
        routes.append(t("app::routes::legacy::export_csv", 4, t("csv::writer::Writer<W>::write_record", 17, ALLOC)))
    conn = t("hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_catch", 2,
        t("hyper::proto::h1::role::Server::parse", 11, t("httparse::Request::parse", 8)),
        t("app::server::Router::call", 1, *routes),
        t("hyper::proto::h1::io::Buffered<T,B>::poll_flush", 1,
          t("tokio_rustls::common::Stream<IO,C>::write_io", 2, t("rustls::conn::ConnectionCommon<T>::write_tls", 3, t("ring::aead::seal", 12)), KERNEL_SEND)))
    worker = t("tokio::runtime::scheduler::multi_thread::worker::Context::run", 3,
        t("tokio::runtime::task::harness::Harness<T,S>::poll", 1, conn),
        t("tokio::runtime::scheduler::multi_thread::park::Parker::park", 2,
          t("tokio::runtime::io::driver::Driver::turn", 3, t("mio::poll::Poll::poll", 1, t("epoll_wait", 0, t("entry_SYSCALL_64_after_hwframe_[k]", 0, t("do_syscall_64_[k]", 0, t("__x64_sys_epoll_wait_[k]", 9))))))))
    return t("search-service", 0,
        t("std::sys::pal::unix::thread::Thread::new::thread_start", 0,
          t("std::thread::Builder::spawn_unchecked_::{{closure}}", 0, worker)),
        t("main", 0, t("app::main", 1, t("app::config::load", 3, t("toml::de::from_str", 5)))))

def expand(node, prefix, out, scale):
    name, w, kids = node
    path = prefix + [name]
    if w:
        out[";".join(path)] = out.get(";".join(path), 0) + w * scale
    for k in kids:
        expand(k, path, out, scale)

def stacks(after, seed):
    rng = random.Random(seed)
    out = {}
    expand(service(after), [], out, 40)
    # Sampling noise, so counts look measured rather than designed.
    return {k: max(1, int(v * rng.uniform(0.9, 1.1))) for k, v in out.items()}

data = Path(__file__).resolve().parent
before = stacks(False, 7)
after = stacks(True, 8)
with open(data / "demo.folded", "w") as f:
    for k in sorted(before):
        f.write(f"{k} {before[k]}\n")
with open(data / "demo-diff.folded", "w") as f:
    for k in sorted(set(before) | set(after)):
        f.write(f"{k} {before.get(k, 0)} {after.get(k, 0)}\n")
print(len(before), sum(before.values()), len(after), sum(after.values()))

# A Go service as Pyroscope exports it (flamebearer JSON, "single" format): exercises the
# JSON importer and gospy package colors.
import json

GO = t("total", 0,
    t("runtime.main", 0,
      t("main.main", 2,
        t("github.com/acme/shop/server.(*Server).Serve", 3,
          t("net/http.(*conn).serve", 6,
            t("net/http.serverHandler.ServeHTTP", 2,
              t("github.com/acme/shop/api.(*Handler).Checkout", 9,
                t("github.com/acme/shop/pricing.Compute", 41, t("math/big.(*Float).Mul", 17)),
                t("github.com/acme/shop/store.(*DB).Query", 6,
                  t("database/sql.(*DB).QueryContext", 4, t("github.com/lib/pq.(*conn).query", 22, t("syscall.Syscall", 14)))),
                t("encoding/json.Marshal", 12, t("encoding/json.(*encodeState).marshal", 19, t("runtime.mallocgc", 11)))),
              t("github.com/acme/shop/api.(*Handler).Browse", 4,
                t("github.com/acme/shop/store.(*DB).Query", 3, t("database/sql.(*DB).QueryContext", 2, t("github.com/lib/pq.(*conn).query", 9))),
                t("html/template.(*Template).Execute", 15, t("text/template.(*state).walk", 21)))),
            t("bufio.(*Reader).ReadLine", 5, t("net.(*conn).Read", 3, t("syscall.Syscall", 8))))))),
    t("runtime.gcBgMarkWorker", 0,
      t("runtime.gcDrain", 14, t("runtime.scanobject", 27, t("runtime.findObject", 9)), t("runtime.markroot", 6))),
    t("runtime.mcall", 0, t("runtime.park_m", 1, t("runtime.schedule", 3, t("runtime.findRunnable", 5, t("runtime.netpoll", 7))))))

def flamebearer(root):
    names, index = [], {}
    def nid(n):
        if n not in index:
            index[n] = len(names); names.append(n)
        return index[n]
    def total(node):
        return node[1] + sum(total(k) for k in node[2])
    levels = []
    # Breadth-first by depth, left to right: (node, x0).
    frontier = [(root, 0)]
    while frontier:
        row, prev_end, nxt = [], 0, []
        for node, x0 in frontier:
            w = total(node)
            row += [x0 - prev_end, w, node[1], nid(node[0])]
            prev_end = x0 + w
            cursor = x0 + node[1]          # self first, then children by name
            for k in sorted(node[2], key=lambda k: k[0]):
                nxt.append((k, cursor)); cursor += total(k)
        levels.append(row)
        frontier = nxt
    n = total(root)
    max_self = max(v for lv in levels for v in lv[2::4])
    return {"version": 1,
            "flamebearer": {"names": names, "levels": levels, "numTicks": n, "maxSelf": max_self},
            "metadata": {"appName": "shop.cpu", "name": "shop.cpu 2026-11-01T10:00:00Z", "format": "single",
                         "sampleRate": 100, "spyName": "gospy", "units": "samples"}}

with open(data / "demo-pyroscope.json", "w") as f:
    json.dump(flamebearer(GO), f, indent=1)
    f.write("\n")
