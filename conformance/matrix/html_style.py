"""The matrix page's style sheet: a compact grid of coloured cells with a sticky header row and requirement
column inside its own scrolling box, pill-shaped filters, a summary table; print in landscape with colours."""

STYLE = """
:root{--ink:#1b1f27;--muted:#5b6472;--line:#d9dee6;--pass:#3f9a5f;--fail:#d2474b;--doc:#e8a33d;--na:#eef0f3}
*{box-sizing:border-box}
html{font-size:14px}
body{font:1rem/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:.6rem 1rem;color:var(--ink)}
h1{font-size:1.35rem;margin:.1rem 0 .2rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
h3{font-size:1rem;margin:1.4rem 0 .3rem;padding-top:.6rem;border-top:1px solid var(--line)}h4{font-size:.9rem;margin:.6rem 0 .2rem}
p,li{max-width:75rem;overflow-wrap:anywhere}
code{font:.85em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
a{color:#1d5fb4}
.meta{color:var(--muted);font-size:.8rem;margin:.1rem 0}
input.f{position:absolute;opacity:0;width:1px;height:1px;margin:0}
.filters{display:flex;flex-wrap:wrap;gap:.35rem 1.1rem;margin:.5rem 0;font-size:.78rem}
.group{display:flex;flex-wrap:wrap;gap:.2rem;align-items:center}
.group b{color:var(--muted);font-weight:600;margin-right:.15rem}
.filters label{border:1px solid var(--line);border-radius:1rem;padding:0 .5rem;cursor:pointer;white-space:nowrap;background:#fff}
.filters label:hover{border-color:var(--muted)}
.filters small{opacity:.7}
.legend{font-size:.78rem;color:var(--muted);margin:.3rem 0;max-width:none}
.sw{display:inline-block;min-width:1.6rem;height:1.2rem;vertical-align:middle;text-align:center;border-radius:3px;margin:0 .3rem 0 .8rem;
 font-size:.72rem;line-height:1.2rem}
.sw:first-child{margin-left:0}
.box{overflow:auto;max-width:100%;max-height:calc(100vh - 1.2rem);border:1px solid var(--line);border-radius:6px;width:max-content}
table.grid{border-collapse:separate;border-spacing:2px;font-size:.72rem}
.grid thead{position:sticky;top:0;z-index:3}
.grid thead th{background:#fff}
.grid th.corner{position:sticky;left:0;z-index:4;text-align:left;vertical-align:bottom;font-size:.78rem;font-weight:600;padding:0 .4rem .2rem;
 background:#fff}
.grid tr.shares th.corner{font-weight:normal;color:var(--muted);font-size:.72rem}
.grid th.col{vertical-align:bottom;padding:.3rem 0 .15rem;font-weight:500}
.grid th.col a{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;max-height:11.5rem;overflow:hidden;text-overflow:ellipsis;
 white-space:nowrap;color:var(--ink);text-decoration:none;font-size:.78rem}
.grid th.col a:hover{text-decoration:underline}
.grid th.req{position:sticky;left:0;z-index:1;background:#fff;text-align:left;font-weight:normal;width:20rem;max-width:20rem;white-space:nowrap;
 overflow:hidden;text-overflow:ellipsis;padding:0 .4rem;font-size:.78rem}
.grid th.req b{font-weight:600;display:inline-block;min-width:5.6rem}
.grid th.req code{font-size:.8rem}
.grid tbody tr:hover th.req{background:#eaf1fb}
.grid tr.sec th{text-align:left;font-size:.8rem;font-weight:650;padding:.55rem .4rem .1rem;color:var(--muted)}
.grid tr.sec th span{position:sticky;left:.4rem}
.grid td{min-width:1.7rem;width:1.7rem;height:1.3rem;padding:0;text-align:center;border-radius:3px}
.grid td a{display:block;line-height:1.3rem;color:inherit;text-decoration:none;border-radius:3px}
.grid td a:hover,.grid td a:focus{outline:2px solid var(--ink);outline-offset:-1px}
.p,.g,.f{color:#fff}.p{background:var(--pass)}.f{background:var(--fail);font-weight:600}
.g{background:repeating-linear-gradient(135deg,#2f8550 0 4px,#5aae77 4px 8px);text-shadow:0 0 2px #173d25,0 0 2px #173d25}
.d{background:var(--doc);color:#3a2600}.n{background:var(--na)}
.s4{background:#3f9a5f;color:#fff}.s3{background:#8ccb9f}.s2{background:#f1d37a}.s1{background:#f0a35e}.s0{background:#d2474b;
 color:#fff}.sn{background:var(--na)}
.grid tr.shares td{font-size:.68rem;font-weight:600}
.wide{overflow-x:auto}
table.summary{border-collapse:collapse;font-size:.82rem}
.summary th,.summary td{border-bottom:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:middle;white-space:nowrap}
.summary thead th{font-size:.75rem;color:var(--muted);font-weight:600;white-space:normal;vertical-align:bottom}
.summary tbody th{font-weight:normal;white-space:normal;min-width:16rem;max-width:30rem}
.summary .num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;width:5rem;height:.6rem;background:var(--na);border-radius:.3rem;overflow:hidden;margin-right:.45rem;vertical-align:middle}
.bar i{display:block;height:100%}
.claim.yes{color:#23713f}.claim.no{color:#a3282c}
.up{font-size:.75rem;font-weight:normal;margin-left:.5rem}
.devs .doc{color:var(--muted)}
li:target,section:target>h3,tr:target{background:#fff3c4}
[id]{scroll-margin-top:.5rem}
@media (max-width:40rem){body{padding:.4rem}.grid th.req{width:9rem;max-width:9rem}}
@media print{
 @page{size:A4 landscape;margin:9mm}
 html{font-size:9px}
 body{padding:0}
 .filters,.up{display:none}
 .box{overflow:visible;max-height:none;border:0;width:auto}
 .grid thead,.grid th.req,.grid th.corner,.grid tr.sec th span{position:static}
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 tr,li{break-inside:avoid}
 a{color:inherit;text-decoration:none}
}
"""
