/**
 * Spanish geographic prefixes → autonomous communities (regional festivos close the calling window,
 * TRLGDCU art. 96.2), found by the mutation run (docs/decisions.md, "Mutation testing") to be
 * checked only in part. The prefixes are the provincial codes of Spain's national numbering plan
 * (Plan Nacional de Numeración Telefónica: 9 + province, 8 + the same digits); the communities
 * are date-holidays' ES region codes.
 */
import test from 'ava';
import { esRegionsOf } from '../../actors/scheduler/es-regions.ts';

/** Province prefix (after the leading 9) → its community or communities. */
const PROVINCE_PREFIXES: [string, string[], string][] = [
  ['1', ['MD'], 'Madrid'],
  ['3', ['CT'], 'Barcelona'],
  ['44', ['PV'], 'Bizkaia'],
  ['43', ['PV'], 'Gipuzkoa'],
  ['45', ['PV'], 'Araba'],
  ['41', ['RI'], 'La Rioja'],
  ['42', ['CB'], 'Cantabria'],
  ['47', ['CL'], 'Burgos'],
  ['48', ['NC'], 'Navarra'],
  ['49', ['CM'], 'Guadalajara'],
  ['50', ['AN'], 'Almería'],
  ['51', ['AN'], 'Málaga'],
  ['52', ['AN', 'ML'], 'Málaga or Melilla'],
  ['53', ['AN'], 'Jaén'],
  ['54', ['AN'], 'Sevilla'],
  ['55', ['AN'], 'Sevilla'],
  ['56', ['AN', 'CE'], 'Cádiz or Ceuta'],
  ['57', ['AN'], 'Córdoba'],
  ['58', ['AN'], 'Granada'],
  ['59', ['AN'], 'Huelva'],
  ['6', ['VC'], 'Valencia'],
  ['64', ['VC'], 'Castellón'],
  ['65', ['VC'], 'Alicante'],
  ['66', ['VC'], 'Alicante'],
  ['67', ['CM'], 'Albacete'],
  ['68', ['MC'], 'Murcia'],
  ['69', ['CM'], 'Cuenca'],
  ['71', ['IB'], 'Illes Balears'],
  ['72', ['CT'], 'Girona'],
  ['73', ['CT'], 'Lleida'],
  ['74', ['AR'], 'Huesca'],
  ['75', ['CL'], 'Soria'],
  ['76', ['AR'], 'Zaragoza'],
  ['77', ['CT'], 'Tarragona'],
  ['78', ['AR'], 'Teruel'],
  ['79', ['CL'], 'Palencia'],
  ['80', ['CL'], 'Zamora'],
  ['81', ['GA'], 'A Coruña'],
  ['82', ['GA'], 'Lugo'],
  ['83', ['CL'], 'Valladolid'],
  ['84', ['AS'], 'Asturias'],
  ['85', ['AS'], 'Asturias'],
  ['86', ['GA'], 'Pontevedra'],
  ['87', ['CL'], 'León'],
  ['88', ['GA'], 'Ourense'],
  ['20', ['CL'], 'Ávila'],
  ['21', ['CL'], 'Segovia'],
  ['22', ['CN'], 'Santa Cruz de Tenerife'],
  ['23', ['CL'], 'Salamanca'],
  ['24', ['EX'], 'Badajoz'],
  ['25', ['CM'], 'Toledo'],
  ['26', ['CM'], 'Ciudad Real'],
  ['27', ['EX'], 'Cáceres'],
  ['28', ['CN'], 'Las Palmas'],
];

test('every Spanish province prefix names its autonomous community (9 and 8 alike)', (t) => {
  for (const [prefix, regions, province] of PROVINCE_PREFIXES) {
    const rest = `${prefix}12345678`.slice(0, 8); // eight digits after the leading 9 or 8
    t.deepEqual([...esRegionsOf(`9${rest}`)], regions, `9${prefix} ${province}`);
    t.deepEqual([...esRegionsOf(`8${rest}`)], regions, `8${prefix} ${province}`);
  }
});

test('a mobile or non-geographic Spanish number may be in any of the 17 communities and 2 autonomous cities', (t) => {
  const all = ['AN', 'AR', 'AS', 'CB', 'CE', 'CL', 'CM', 'CN', 'CT', 'EX', 'GA', 'IB', 'MC', 'MD', 'ML', 'NC', 'PV', 'RI', 'VC'];
  for (const n of ['612345678', '712345678', '512345678']) t.deepEqual([...esRegionsOf(n)].sort(), all, n);
});
