// WGSL syntax highlighting for ```wgsl blocks.
//
// mdBook 0.5.4 ships highlight.js 10.1.1 without a WGSL grammar, and its book.js highlights
// every code block as soon as it loads, before any `additional-js` script runs. So this file
// is loaded twice:
//
// - from theme/head.hbs, in <head>, before highlight.js exists: it waits for highlight.js to
//   define the global `hljs` and registers the grammar at that moment, so book.js's single
//   pass already knows WGSL (and logs no "Could not find the language 'wgsl'" warning);
// - from `additional-js` (book.toml lists it, which is also what makes mdBook copy it), after
//   book.js: if the grammar is registered already this does nothing; otherwise (a future
//   highlight.js that defines `hljs` differently) it registers it now and highlights the
//   WGSL blocks again.
//
// The grammar follows the WGSL specification (https://www.w3.org/TR/WGSL/): keywords,
// predeclared types and their aliases (vec4f, mat4x4h, …), address spaces and access modes,
// built-in functions and built-in values, attributes (@group, @builtin, …), numeric literals
// with their suffixes (1u, 2.5f, 0x1p4h), and nested block comments.
(function () {
    'use strict';

    // Reserved words of the language that this book's readers meet (WGSL §15.1, §15.2).
    const KEYWORDS = [
        'alias', 'break', 'case', 'const', 'const_assert', 'continue', 'continuing',
        'default', 'diagnostic', 'discard', 'else', 'enable', 'fn', 'for', 'if', 'let',
        'loop', 'override', 'requires', 'return', 'struct', 'switch', 'var', 'while',
    ];

    const LITERALS = ['true', 'false'];

    // Predeclared types, including the sized aliases: vec2f … vec4h, mat2x2f … mat4x4h.
    const TYPES = (() => {
        const types = [
            'bool', 'f16', 'f32', 'i32', 'u32', 'array', 'atomic', 'ptr',
            'sampler', 'sampler_comparison',
            'texture_1d', 'texture_2d', 'texture_2d_array', 'texture_3d', 'texture_cube',
            'texture_cube_array', 'texture_multisampled_2d', 'texture_external',
            'texture_storage_1d', 'texture_storage_2d', 'texture_storage_2d_array',
            'texture_storage_3d', 'texture_depth_2d', 'texture_depth_2d_array',
            'texture_depth_cube', 'texture_depth_cube_array',
            'texture_depth_multisampled_2d',
        ];
        for (const n of [2, 3, 4]) {
            types.push('vec' + n);
            for (const suffix of ['f', 'h', 'i', 'u']) {
                types.push('vec' + n + suffix);
            }
            for (const m of [2, 3, 4]) {
                types.push('mat' + n + 'x' + m, 'mat' + n + 'x' + m + 'f', 'mat' + n + 'x' + m + 'h');
            }
        }
        return types;
    })();

    const BUILT_INS = [
        // Address spaces and access modes, as in var<storage, read_write>.
        'function', 'private', 'workgroup', 'uniform', 'storage', 'handle',
        'read', 'write', 'read_write',
        // Built-in values, as in @builtin(global_invocation_id).
        'vertex_index', 'instance_index', 'position', 'front_facing', 'frag_depth',
        'sample_index', 'sample_mask', 'local_invocation_id', 'local_invocation_index',
        'global_invocation_id', 'workgroup_id', 'num_workgroups', 'subgroup_invocation_id',
        'subgroup_size', 'clip_distances', 'primitive_index',
        // Built-in functions (WGSL §17).
        'bitcast', 'all', 'any', 'select', 'arrayLength',
        'abs', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atanh', 'atan2', 'ceil', 'clamp',
        'cos', 'cosh', 'countLeadingZeros', 'countOneBits', 'countTrailingZeros', 'cross',
        'degrees', 'determinant', 'distance', 'dot', 'dot4U8Packed', 'dot4I8Packed', 'exp',
        'exp2', 'extractBits', 'faceForward', 'firstLeadingBit', 'firstTrailingBit', 'floor',
        'fma', 'fract', 'frexp', 'insertBits', 'inverseSqrt', 'ldexp', 'length', 'log',
        'log2', 'max', 'min', 'mix', 'modf', 'normalize', 'pow', 'quantizeToF16', 'radians',
        'reflect', 'refract', 'reverseBits', 'round', 'saturate', 'sign', 'sin', 'sinh',
        'smoothstep', 'sqrt', 'step', 'tan', 'tanh', 'transpose', 'trunc',
        'dpdx', 'dpdxCoarse', 'dpdxFine', 'dpdy', 'dpdyCoarse', 'dpdyFine', 'fwidth',
        'fwidthCoarse', 'fwidthFine',
        'textureDimensions', 'textureGather', 'textureGatherCompare', 'textureLoad',
        'textureNumLayers', 'textureNumLevels', 'textureNumSamples', 'textureSample',
        'textureSampleBias', 'textureSampleCompare', 'textureSampleCompareLevel',
        'textureSampleGrad', 'textureSampleLevel', 'textureSampleBaseClampToEdge',
        'textureStore',
        'atomicLoad', 'atomicStore', 'atomicAdd', 'atomicSub', 'atomicMax', 'atomicMin',
        'atomicAnd', 'atomicOr', 'atomicXor', 'atomicExchange', 'atomicCompareExchangeWeak',
        'pack4x8snorm', 'pack4x8unorm', 'pack4xI8', 'pack4xU8', 'pack4xI8Clamp',
        'pack4xU8Clamp', 'pack2x16snorm', 'pack2x16unorm', 'pack2x16float',
        'unpack4x8snorm', 'unpack4x8unorm', 'unpack4xI8', 'unpack4xU8', 'unpack2x16snorm',
        'unpack2x16unorm', 'unpack2x16float',
        'storageBarrier', 'textureBarrier', 'workgroupBarrier', 'workgroupUniformLoad',
        'subgroupAdd', 'subgroupExclusiveAdd', 'subgroupInclusiveAdd', 'subgroupAll',
        'subgroupAnd', 'subgroupAny', 'subgroupBallot', 'subgroupBroadcast',
        'subgroupBroadcastFirst', 'subgroupElect', 'subgroupMax', 'subgroupMin',
        'subgroupMul', 'subgroupExclusiveMul', 'subgroupInclusiveMul', 'subgroupOr',
        'subgroupShuffle', 'subgroupShuffleDown', 'subgroupShuffleUp', 'subgroupShuffleXor',
        'subgroupXor', 'quadBroadcast', 'quadSwapDiagonal', 'quadSwapX', 'quadSwapY',
    ];

    function wgsl(hljs) {
        // Block comments nest in WGSL: /* a /* b */ still a comment */.
        const blockComment = hljs.COMMENT(/\/\*/, /\*\//, { contains: ['self'] });
        return {
            name: 'WGSL',
            aliases: ['wgsl'],
            keywords: {
                $pattern: /[A-Za-z_][A-Za-z0-9_]*/,
                keyword: KEYWORDS.join(' '),
                literal: LITERALS.join(' '),
                type: TYPES.join(' '),
                built_in: BUILT_INS.join(' '),
            },
            contains: [
                hljs.C_LINE_COMMENT_MODE,
                blockComment,
                // Attributes: @group(0), @builtin(global_invocation_id), @compute.
                { className: 'meta', begin: /@[A-Za-z_][A-Za-z0-9_]*/ },
                {
                    className: 'number',
                    relevance: 0,
                    variants: [
                        // Hexadecimal integers and floats: 0xFFu, 0x1.8p4f.
                        { begin: /\b0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+[fh]?)?[iu]?/ },
                        // Decimal floats: 1.0, 1., .5, 2e-3, 1.5f, 3h.
                        { begin: /(?:\b[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fh]?/ },
                        { begin: /\b[0-9]+[eE][+-]?[0-9]+[fh]?/ },
                        // Decimal integers, and floats written with a suffix: 256u, -1i, 2f.
                        { begin: /\b[0-9]+[iufh]?\b/ },
                    ],
                },
                {
                    className: 'function',
                    beginKeywords: 'fn',
                    end: /[(<]/,
                    excludeEnd: true,
                    contains: [hljs.UNDERSCORE_TITLE_MODE],
                },
                {
                    className: 'class',
                    beginKeywords: 'struct',
                    end: /\{/,
                    excludeEnd: true,
                    contains: [hljs.UNDERSCORE_TITLE_MODE],
                },
            ],
        };
    }

    // The global highlight.js object, however highlight.js declared it.
    function currentHljs() {
        // eslint-disable-next-line no-undef
        return typeof hljs !== 'undefined' ? hljs : window.hljs;
    }

    function register(h) {
        if (h && typeof h.registerLanguage === 'function' && !h.getLanguage('wgsl')) {
            h.registerLanguage('wgsl', wgsl);
            return true;
        }
        return false;
    }

    const existing = currentHljs();
    if (existing) {
        // Run after book.js: register if the <head> run could not, and highlight the WGSL
        // blocks book.js left plain.
        if (register(existing)) {
            for (const block of document.querySelectorAll('code.language-wgsl')) {
                existing.highlightBlock(block);
            }
        }
        return;
    }

    // Run from <head>: highlight.js's `var hljs = …` assigns the global property, which calls
    // this setter; the grammar is registered there, and `hljs` becomes a plain property again.
    let value;
    Object.defineProperty(window, 'hljs', {
        configurable: true,
        enumerable: true,
        get() {
            return value;
        },
        set(h) {
            value = h;
            Object.defineProperty(window, 'hljs', {
                configurable: true, enumerable: true, writable: true, value: h,
            });
            register(h);
        },
    });
})();
