import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { CallsByDay } from '../types.ts';

/**
 * Calls of the last 30 days as lines (placed, connected, appointments): loaded on demand with
 * uplot, so the first load does not carry it. Hidden from screen readers, who get the table
 * next to it instead.
 */
export default function CallsChart({ days }: { days: CallsByDay[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const data: uPlot.AlignedData = [xs, days.map((d) => d.placed), days.map((d) => d.connected), days.map((d) => d.appointments)];
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
        // The legend is the page's own (next to the chart), the numbers are in the table below.
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [{ stroke: '#5b6472', grid: { stroke: '#eef0f3' } }, { stroke: '#5b6472', grid: { stroke: '#eef0f3' } }],
        series: [
          {},
          { label: 'Placed', stroke: '#3451b2', width: 2 },
          { label: 'Connected', stroke: '#0f7b6c', width: 2 },
          { label: 'Appointments', stroke: '#b4530a', width: 2, dash: [6, 4] },
        ],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days]);
  return <div className="chart" ref={box} aria-hidden="true" />;
}
