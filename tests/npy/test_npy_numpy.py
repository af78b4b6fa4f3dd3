#!/usr/bin/python3
"""tests/npy/test_npy_numpy.py — TSL's .npy reader and writer judged by NumPy itself.

NumPy writes .npy files of every dtype TSL shares with it (bool, int32, int64, float16,
float32, float64): C order, Fortran order, non-contiguous sources, 0-d and empty arrays,
little- and big-endian, format versions 1.0, 2.0 and 3.0, random values with NaN, inf,
-0.0, subnormals and arbitrary bit patterns (NaN payloads included). The helper program
(npy_roundtrip.cpp) loads each with loadNpy and saves it with saveNpy; NumPy then loads
the result, which must hold the same bits in C order with the same shape and the dtype in
this machine's byte order, behind a 64-byte aligned version 1.0 header. bf16 tensors,
which NumPy lacks, must arrive as float32 holding exactly the bf16-rounded values.

Usage: test_npy_numpy.py PATH/TO/npy-roundtrip   (exit status 0 when every check passes)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HELPER = sys.argv[1]
rng = np.random.default_rng(20240607)
failures = []
checks = 0

# NumPy dtype -> the type name TSL prints.
TSL_NAMES = {'bool': 'bool', 'int32': 'i32', 'int64': 'i64', 'float16': 'f16',
             'float32': 'f32', 'float64': 'f64'}
SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 3, 5), (0, 3), (3, 0), (2, 1, 3),
          (1, 1, 1, 1, 1, 1, 2, 3), (64, 37)]


def check(condition, what):
    global checks
    checks += 1
    if not condition:
        failures.append(what)
    return condition


def run(*args):
    return subprocess.run([HELPER, *args], capture_output=True, text=True)


def random_array(dtype, shape):
    """Random values of `dtype` (native order) with the awkward ones mixed in."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == 'b':
        return rng.random(shape) < 0.5
    if dtype.kind == 'i':
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dtype)
        flat[:min(n, 3)] = [info.min, info.max, 0][:min(n, 3)]
        rng.shuffle(flat)
        return flat.reshape(shape)
    info = np.finfo(dtype)
    with np.errstate(over='ignore'):
        flat = (rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)).astype(dtype)
    # About a quarter arbitrary bit patterns: signalling and payload-carrying NaNs too.
    raw = np.frombuffer(rng.bytes(n * dtype.itemsize), dtype=f'u{dtype.itemsize}')
    pick = rng.random(n) < 0.25
    flat[pick] = raw.view(dtype)[pick]
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, info.tiny / 4,
                         -info.max, info.max, info.eps], dtype=dtype)
    k = min(n, len(specials))
    flat[rng.choice(n, k, replace=False)] = specials[:k]
    return flat.reshape(shape)


def bits(a):
    """The elements of `a` as unsigned integers of the same width, C order, native order."""
    a = np.asarray(a)
    if a.dtype.kind == 'b':
        return np.ascontiguousarray(a).view(np.uint8).copy()
    order = '>' if a.dtype.byteorder == '>' else '<'
    return np.ascontiguousarray(a).view(f'{order}u{a.dtype.itemsize}').astype(f'=u{a.dtype.itemsize}')


def header_of(path):
    """(version, header dict, data offset) as NumPy reads them."""
    with open(path, 'rb') as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        return version, {'shape': shape, 'fortran_order': fortran, 'descr': dtype}, f.tell()


def save(path, array, version):
    if version is None:
        np.save(path, array)
    else:
        with open(path, 'wb') as f:
            np.lib.format.write_array(f, array, version=version)


def expect_tsl_file(path, expected, name):
    """`path`, written by TSL, holds `expected` (same bits, native order, C order)."""
    version, header, offset = header_of(path)
    check(version == (1, 0), f'{name}: TSL wrote version {version}')
    check(offset % 64 == 0, f'{name}: data offset {offset} is not 64-byte aligned')
    check(not header['fortran_order'], f'{name}: TSL wrote fortran_order True')
    back = np.load(path)
    native = expected.dtype.newbyteorder('=') if expected.dtype.itemsize > 1 else expected.dtype
    if not check(back.dtype == native, f'{name}: dtype {back.dtype}, expected {native}'):
        return
    if not check(back.shape == expected.shape, f'{name}: shape {back.shape}, expected {expected.shape}'):
        return
    check(back.flags.c_contiguous, f'{name}: NumPy did not load C-contiguous data')
    check(np.array_equal(bits(back), bits(expected)), f'{name}: elements differ from the source bits')


def round_trip_case(tmp, array, name, version=None, transpose=False):
    source = os.path.join(tmp, 'in.npy')
    save(source, array, version)
    _, header, _ = header_of(source)
    tsl_type = TSL_NAMES[array.dtype.name] + ('' if array.ndim == 0 else
                                               '[' + ','.join(map(str, array.shape)) + ']')
    info = run('--info', source)
    check(info.returncode == 0 and info.stdout.strip() == tsl_type,
          f'{name}: --info gave {info.stdout.strip()!r} {info.stderr.strip()!r}, expected {tsl_type!r}')
    out = os.path.join(tmp, 'out.npy')
    result = run(source, out)
    if not check(result.returncode == 0, f'{name}: round trip failed: {result.stderr.strip()}'):
        return header
    expect_tsl_file(out, array, name)
    if transpose and array.ndim >= 1:
        result = run('--transpose', source, out)
        if check(result.returncode == 0, f'{name}: --transpose failed: {result.stderr.strip()}'):
            expect_tsl_file(out, array.T, name + ' transposed')
    return header


def layouts(array):
    """(label, array, expected fortran_order in NumPy's file) for every layout of `array`."""
    yield 'C', array, False
    if array.ndim >= 2:
        fortran = np.asfortranarray(array)
        yield 'F', fortran, not fortran.flags.c_contiguous
        # Neither C- nor F-contiguous: every other row of a larger array, last axis reversed.
        larger = np.empty((2 * array.shape[0],) + array.shape[1:], dtype=array.dtype)
        larger[::2, ..., ::-1] = array
        yield 'strided', larger[::2, ..., ::-1], False
    if array.ndim == 1 and array.size > 1:
        larger = np.empty(2 * array.size, dtype=array.dtype)
        larger[::-2] = array
        yield 'strided', larger[::-2], False


def main():
    with tempfile.TemporaryDirectory(prefix='tsl-npy-') as tmp:
        for dtype in TSL_NAMES:
            for shape in SHAPES:
                base = random_array(dtype, shape)
                orders = ['<', '>'] if np.dtype(dtype).itemsize > 1 else ['|']
                for order in orders:
                    typed = base.astype(np.dtype(dtype).newbyteorder(order)) if order != '|' else base
                    for label, array, fortran in layouts(typed):
                        name = f'{dtype} {shape} {label} {order}'
                        header = round_trip_case(tmp, array, name, transpose=(order != '>'))
                        check(header['fortran_order'] == fortran,
                              f'{name}: test setup: NumPy wrote fortran_order {header["fortran_order"]}')
            # The other format versions NumPy writes (longer header length field; UTF-8).
            for version in [(1, 0), (2, 0), (3, 0)]:
                array = np.asfortranarray(random_array(dtype, (4, 5)))
                round_trip_case(tmp, array, f'{dtype} version {version}', version=version)

        bf16_cases(tmp)
        error_cases(tmp)

    if failures:
        for failure in failures:
            print('FAIL:', failure)
        print(f'{len(failures)} of {checks} checks failed')
        return 1
    print(f'all {checks} checks passed')
    return 0


def bf16_rounded(a):
    """float32 values rounded to bf16 (nearest, ties to even) and widened back, as bits.
    NaNs become the quiet NaN 0x7fc0 with their sign, as Eigen's conversion gives."""
    u = bits(a.astype('<f4')).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    nan = np.isnan(a)
    rounded[nan] = np.where((u[nan] >> 31) == 1, 0xFFC00000, 0x7FC00000).astype(np.uint32)
    return rounded


def bf16_cases(tmp):
    for shape in [(), (0,), (9,), (5, 7), (3, 0), (2, 3, 4)]:
        base = random_array('float32', shape)
        for order in '<>':
            for label, array, _ in layouts(base.astype(np.dtype('float32').newbyteorder(order))):
                name = f'bf16 {shape} {label} {order}'
                source, out = os.path.join(tmp, 'in.npy'), os.path.join(tmp, 'out.npy')
                np.save(source, array)
                result = run('--bf16', source, out)
                if not check(result.returncode == 0, f'{name}: --bf16 failed: {result.stderr.strip()}'):
                    continue
                back = np.load(out)
                if not check(back.dtype == np.dtype('float32') and back.shape == array.shape,
                             f'{name}: got {back.dtype} {back.shape}'):
                    continue
                check(np.array_equal(bits(back), bf16_rounded(np.ascontiguousarray(array))),
                      f'{name}: values are not the bf16-rounded float32 values')


def error_cases(tmp):
    """Files NumPy writes that TSL must refuse with an io error naming the file."""
    def expect_error(path, words, name):
        result = run('--info', path)
        message = result.stderr.strip()
        check(result.returncode == 1 and message.startswith('io error: ') and path in message
              and all(w in message for w in words),
              f'{name}: expected an io error with {words}, got {result.returncode} {message!r}')

    path = os.path.join(tmp, 'bad.npy')
    for dtype in ['uint8', 'uint16', 'int8', 'int16', 'float128', 'complex64', 'U3']:
        np.save(path, np.zeros(3, dtype=dtype))
        expect_error(path, ['unsupported dtype'], f'dtype {dtype}')
    np.save(path, np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
    expect_error(path, ['structured'], 'structured dtype')
    np.save(path, np.array([{}, None], dtype=object), allow_pickle=True)
    expect_error(path, ['unsupported dtype'], 'object dtype')
    np.save(path, np.arange(1000, dtype='<f4'))
    with open(path, 'rb') as f:
        data = f.read()
    for cut in [len(data) - 1, len(data) - 4000 + 12, 100, 9, 3, 0]:
        with open(path, 'wb') as f:
            f.write(data[:cut])
        expect_error(path, [], f'cut to {cut} bytes')
    with open(path, 'wb') as f:
        f.write(data[:len(data) - 4000 + 12])
    expect_error(path, ['truncated: expected 4000 bytes of data, found 12'], 'truncated data')


if __name__ == '__main__':
    sys.exit(main())
